import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort } from './ports';
import { removeDir, tempDir } from './temp';
import { ensureBinary, findBinary } from './binaries';

describe('freePort', () => {
  it('returns distinct loopback ports that can be bound', async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    for (const port of ports) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
      await new Promise((resolve) => server.close(resolve));
    }
    expect(ports.every((p) => p > 0 && p < 65536)).toBe(true);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('picks below the kernel ephemeral range, where no outgoing connection can take the port', async () => {
    const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(ports.filter((p) => p >= ephemeralLow)).toEqual([]);
    expect(new Set(ports).size).toBe(50);
  });
});

describe('tempDir', () => {
  it('creates a fresh directory and removeDir deletes it with its contents', async () => {
    const a = await tempDir('t-');
    const b = await tempDir('t-');
    expect(a).not.toBe(b);
    expect(a).toMatch(/orch-t-/);
    await writeFile(join(a, 'f'), 'x');
    await removeDir(a);
    await removeDir(b);
    expect(existsSync(a)).toBe(false);
    await expect(removeDir(a)).resolves.toBeUndefined();
  });
});

describe('ensureBinary', () => {
  it('finds binaries on PATH and in sbin', async () => {
    expect(await ensureBinary('sh', 'dash')).toMatch(/\/sh$/);
    expect(findBinary('orch-no-such-binary')).toBeUndefined();
  });

  it('asks for the package when it cannot install', async () => {
    const getuid = jest.spyOn(process, 'getuid').mockReturnValue(1000);
    try {
      await expect(ensureBinary('orch-no-such-binary', 'orch-pkg')).rejects.toThrow(
        'orch-no-such-binary is not installed; install it with: sudo apt-get install -y orch-pkg',
      );
    } finally {
      getuid.mockRestore();
    }
  });
});
