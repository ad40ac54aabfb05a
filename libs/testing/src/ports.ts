import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Lowest port handed out by freePort; below it sit the well-known ports (6443, 10250, ...). */
const LOWEST_TEST_PORT = 15000;

/** Ports this process handed out already, so two calls in a row never answer the same port. */
const handedOut = new Set<number>();

/**
 * The first port of the kernel's ephemeral range (`ip_local_port_range`). Outgoing connections
 * take their local port from that range, so a port picked there can be taken by any client
 * between the pick and the bind — and held for as long as that connection lives.
 */
function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && low > 0 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** Whether 127.0.0.1:port can be bound right now (binds and closes). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Binds :0 and answers the port the kernel chose (in the ephemeral range). */
function kernelChosenPort(): Promise<number> {
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

/**
 * A TCP port that was free on 127.0.0.1 a moment ago. It is picked at random below the
 * kernel's ephemeral range, so no outgoing connection (of this process, a child or another
 * test) can take it before the caller binds it; another process picking ports the same way
 * may still take it, so callers that start servers retry with a new port when the bind fails.
 * Falls back to a kernel-chosen port when the ephemeral range leaves no room below it.
 */
export async function freePort(): Promise<number> {
  const ceiling = ephemeralRangeStart();
  if (ceiling - LOWEST_TEST_PORT < 1000) return kernelChosenPort();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST_TEST_PORT + Math.floor(Math.random() * (ceiling - LOWEST_TEST_PORT));
    if (handedOut.has(port)) continue;
    handedOut.add(port); // reserved before the check, so concurrent calls never pick it twice
    if (await bindable(port)) return port;
    handedOut.delete(port);
  }
  return kernelChosenPort();
}
