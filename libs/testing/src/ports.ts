import { createServer } from 'node:net';

/**
 * A TCP port that was free on 127.0.0.1 a moment ago: binds :0, reads the port the kernel
 * chose and closes. Another process may take it before the caller binds it; callers that
 * start servers retry with a new port when the bind fails (see startProcess users).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`unexpected server address ${String(address)}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
