import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort, removeDir, startProcess, tempDir } from '@orch/testing';
import { GATEWAY_MAIN } from './support/gateway';

/** Resolves when a TCP connection to the port succeeds, trying again every millisecond or so. */
async function firstConnect(port: number, deadlineMs: number): Promise<number> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return Date.now();
    if (Date.now() > deadlineMs) throw new Error(`port ${port} never accepted a connection`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/**
 * npm start launches the components as soon as the gateway answers: their kubeconfigs must
 * exist by then. Before, the gateway wrote them after opening its port, and a component started
 * in between exited on ENOENT (full-stack e2e: "metrics-server exited (1); stopping the control plane").
 */
describe('gateway --write-component-kubeconfigs', () => {
  it('writes the admin and component kubeconfigs before its port accepts connections', async () => {
    const dataDir = await tempDir('orch-gw-kubeconfigs-');
    const port = await freePort();
    const gateway = await startProcess({
      cmd: process.execPath,
      args: [GATEWAY_MAIN, `--secure-port=${port}`, '--bind-address=127.0.0.1', `--data-dir=${dataDir}`, '--write-component-kubeconfigs'],
    });
    try {
      const open = await firstConnect(port, Date.now() + 60_000);
      const written = Object.fromEntries(
        ['admin', 'controller-manager', 'scheduler', 'network-proxy', 'metrics-server', 'node-agent'].map((name) => {
          try {
            return [name, Math.floor(statSync(join(dataDir, `${name}.kubeconfig`)).mtimeMs) <= open];
          } catch {
            return [name, false];
          }
        }),
      );
      expect(written).toEqual({ admin: true, 'controller-manager': true, scheduler: true, 'network-proxy': true, 'metrics-server': true, 'node-agent': true });
    } finally {
      await gateway.stop();
      await removeDir(dataDir);
    }
  }, 90_000);
});
