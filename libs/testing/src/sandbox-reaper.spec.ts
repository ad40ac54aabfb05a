import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { reapSandboxHolders } from './sandbox-reaper';
import { removeDir, tempDir } from './temp';
import { waitFor } from './wait';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('reapSandboxHolders', () => {
  it('kills the recorded holders that still run sleep infinity, and nothing else', async () => {
    const root = await tempDir('reaper-');
    const holder = spawn('sleep', ['infinity'], { detached: true, stdio: 'ignore' });
    const other = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    const holderExited = new Promise((r) => holder.once('exit', r));
    try {
      const record = async (uid: string, pid: number) => {
        await mkdir(join(root, 'agent-a', 'pods', uid, 'pids'), { recursive: true });
        await writeFile(join(root, 'agent-a', 'pods', uid, 'pids', 'sandbox'), String(pid));
      };
      await record('held', holder.pid!);
      await record('not-a-holder', other.pid!);
      await record('this-process', process.pid);
      await record('gone', 999_999_999);
      await waitFor(() => alive(holder.pid!) && alive(other.pid!), 'both started');
      expect(await reapSandboxHolders(root)).toBe(1);
      await holderExited;
      expect(alive(other.pid!)).toBe(true);
      expect(await reapSandboxHolders(root)).toBe(0);
    } finally {
      holder.kill('SIGKILL');
      other.kill('SIGKILL');
      await removeDir(root);
    }
  });
});
