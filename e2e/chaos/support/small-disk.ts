import { closeSync, openSync, writeSync } from 'node:fs';
import { readdir, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureBinary, startProcess, type RunningProcess } from '@orch/testing';

/**
 * A size-limited tmpfs mounted at `dir` in a mount namespace of its own, so nothing on the
 * host changes and the mount disappears with its holder process. Commands run on it through
 * `launcher` (`nsenter -t <holder> -m --`); `hostPath` reaches its files from here
 * (`/proc/<holder>/root/...`). `fill()` writes a filler file until the disk is full and
 * `free()` removes it. Needs root (mount) and util-linux (unshare, nsenter; installed when
 * missing).
 */
export interface SmallDisk {
  dir: string;
  launcher: string[];
  hostPath(path: string): string;
  /** Fills the disk to the last byte; resolves with the bytes written. */
  fill(): Promise<number>;
  free(): Promise<void>;
  /** What takes the space, for a failure message: each file's size and the bytes still free. */
  usage(): Promise<string>;
  /** The summed size of these files in `dir` (missing ones count 0). */
  bytes(files: string[]): Promise<number>;
  stop(): Promise<void>;
}

export async function startSmallDisk(dir: string, sizeBytes: number): Promise<SmallDisk> {
  if (process.getuid?.() !== 0) throw new Error('the full-disk scenario mounts a tmpfs: run it as root');
  const unshare = await ensureBinary('unshare', 'util-linux');
  const nsenter = await ensureBinary('nsenter', 'util-linux');
  let mounted = false;
  const holder: RunningProcess = await startProcess({
    cmd: unshare,
    args: ['--mount', '--propagation', 'private', 'sh', '-c', `mount -t tmpfs -o size=${sizeBytes} orch-small-disk "$0" && echo mounted && exec sleep infinity`, dir],
    onLine: (line) => {
      if (line === 'mounted') mounted = true;
    },
    readyProbe: async () => mounted,
    timeoutMs: 10_000,
  });
  const hostPath = (path: string) => join(`/proc/${holder.pid}/root`, path);
  const filler = hostPath(join(dir, 'filler'));
  return {
    dir,
    launcher: [nsenter, '-t', String(holder.pid), '-m', '--'],
    hostPath,
    async fill() {
      const fd = openSync(filler, 'a');
      let written = 0;
      try {
        for (const chunk of [Buffer.alloc(1 << 20, 1), Buffer.alloc(4096, 1), Buffer.alloc(1, 1)]) {
          for (;;) {
            try {
              written += writeSync(fd, chunk);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw err;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free: () => rm(filler, { force: true }),
    async usage() {
      const root = hostPath(dir);
      const files = await Promise.all((await readdir(root)).map(async (f) => `${f} ${(await stat(join(root, f))).size}`));
      const fs = await statfs(root);
      return `${files.join(', ')}; free ${fs.bavail * fs.bsize} of ${sizeBytes} bytes`;
    },
    async bytes(files) {
      const sizes = await Promise.all(files.map((f) => stat(hostPath(join(dir, f))).then((s) => s.size, () => 0)));
      return sizes.reduce((a, b) => a + b, 0);
    },
    async stop() {
      await holder.kill9();
    },
  };
}
