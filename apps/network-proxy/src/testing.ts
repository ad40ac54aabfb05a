import dgram from 'node:dgram';
import net from 'node:net';

/**
 * Test backends: TCP and UDP servers that answer with their name, on one port shared by
 * several loopback addresses (like pods of one service). Not part of the proxy.
 */
export interface TestBackends {
  port: number;
  ips: string[];
  /** Connections (TCP) or datagrams (UDP) each backend has seen, by IP. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/**
 * TCP backends: on connect each sends `<ip>\n`, then echoes what it receives and ends its
 * side when the client ends (half-close aware).
 */
export async function tcpBackends(ips: string[]): Promise<TestBackends> {
  for (let attempt = 0; ; attempt++) {
    const servers: net.Server[] = [];
    const hits = new Map<string, number>();
    const sockets = new Set<net.Socket>();
    try {
      let port = 0;
      for (const ip of ips) {
        const server = net.createServer({ allowHalfOpen: true }, (s) => {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
          hits.set(ip, (hits.get(ip) ?? 0) + 1);
          s.write(`${ip}\n`);
          s.pipe(s);
        });
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen({ host: ip, port, exclusive: true }, () => resolve());
        });
        servers.push(server);
        port = (server.address() as net.AddressInfo).port;
      }
      return {
        port,
        ips,
        hits,
        close: async () => {
          for (const s of sockets) s.destroy();
          await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
        },
      };
    } catch (err) {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      if (attempt >= 5) throw err;
    }
  }
}

/** UDP backends: each answers a datagram with `<ip>:<payload>`. */
export async function udpBackends(ips: string[]): Promise<TestBackends> {
  for (let attempt = 0; ; attempt++) {
    const sockets: dgram.Socket[] = [];
    const hits = new Map<string, number>();
    try {
      let port = 0;
      for (const ip of ips) {
        const s = dgram.createSocket('udp4');
        s.on('message', (msg, r) => {
          hits.set(ip, (hits.get(ip) ?? 0) + 1);
          s.send(Buffer.concat([Buffer.from(`${ip}:`), msg]), r.port, r.address);
        });
        await new Promise<void>((resolve, reject) => {
          s.once('error', reject);
          s.bind({ address: ip, port, exclusive: true }, () => resolve());
        });
        sockets.push(s);
        port = s.address().port;
      }
      return { port, ips, hits, close: async () => void (await Promise.all(sockets.map((s) => new Promise((r) => s.close(() => r(undefined)))))) };
    } catch (err) {
      await Promise.all(sockets.map((s) => new Promise((r) => s.close(() => r(undefined)))));
      if (attempt >= 5) throw err;
    }
  }
}

/** Opens a TCP connection and resolves with the first line the server sends (the backend's name). */
export function firstLine(host: string, port: number, opts: { localAddress?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, localAddress: opts.localAddress });
    let buf = '';
    s.setTimeout(opts.timeoutMs ?? 2000, () => {
      s.destroy();
      reject(new Error(`no answer from ${host}:${port} within ${opts.timeoutMs ?? 2000} ms`));
    });
    s.on('data', (d) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        s.destroy();
        resolve(buf.slice(0, nl));
      }
    });
    s.on('error', reject);
  });
}

/** One UDP request/response through host:port; rejects after timeoutMs without an answer. */
export function udpRequest(host: string, port: number, payload: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      reject(new Error(`no UDP answer from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    s.on('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m.toString());
    });
    s.on('error', (err) => {
      clearTimeout(timer);
      s.close();
      reject(err);
    });
    s.send(payload, port, host);
  });
}

/** A free TCP+UDP port on ip (bound and released; another process may still take it). */
export async function freePortOn(ip: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: ip, port: 0 }, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}
