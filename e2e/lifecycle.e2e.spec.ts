import { startGateway } from './support/gateway';

describe('gateway lifecycle', () => {
  it('--shutdown-delay-duration: readyz fails first, requests still served, watches end cleanly', async () => {
    const gw = await startGateway({ args: ['--shutdown-delay-duration=3s'] });
    try {
      const watching = gw.admin.watch('/api/v1/namespaces/default/configmaps?watch=1', () => false, 20_000);
      await new Promise((r) => setTimeout(r, 300));
      process.kill(gw.process.pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      const ready = await gw.admin.get('/readyz?verbose');
      expect(ready.status).toBe(500);
      expect(ready.text).toContain('[-]shutdown failed');
      expect((await gw.admin.get('/livez')).status).toBe(200);
      expect((await gw.admin.get('/api/v1/namespaces/default')).status).toBe(200);
      const w = await watching;
      expect(w.status).toBe(200);
      const exit = await gw.process.exited;
      expect(exit.code).toBe(0);
    } finally {
      await gw.stop();
    }
  });

  it.each([
    { name: 'unknown feature gate', args: ['--feature-gates=NoSuchGate=true'], message: /unrecognized feature gate: NoSuchGate/ },
    { name: 'disabling a GA gate', args: ['--feature-gates=DryRun=false'], message: /feature is locked to true/ },
    { name: 'unknown runtime-config group', args: ['--runtime-config=nosuch.orch.io/v1=false'], message: /unknown api groupVersion/ },
    { name: 'unknown flag', args: ['--no-such-flag'], message: /unknown flag/ },
  ])('start-up error: $name', async ({ args, message }) => {
    await expect(startGateway({ args })).rejects.toThrow(message);
  });
});
