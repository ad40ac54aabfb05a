import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { overHttp2 } from './http2';

type Exchange = { req: object; res: object; socket: object };

/** One real request to a real server on a free port; resolves with what the handler was given. */
async function exchange(version: '1.1' | '2'): Promise<Exchange> {
  let seen!: Exchange;
  const handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    seen = { req, res, socket: req.socket };
    res.end('ok');
  };
  const server = version === '2' ? http2.createServer(handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    if (version === '2') {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      await new Promise<void>((resolve, reject) => session.request({ ':path': '/' }).on('error', reject).on('close', resolve).resume());
      session.close();
    } else {
      await new Promise<void>((resolve, reject) => http.get({ port, host: '127.0.0.1', agent: false }, (r) => r.resume().on('end', resolve)).on('error', reject));
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return seen;
}

describe('overHttp2', () => {
  it.each<[string, '1.1' | '2', keyof Exchange, boolean]>([
    ['an HTTP/1.1 request', '1.1', 'req', false],
    ['an HTTP/1.1 response', '1.1', 'res', false],
    ['an HTTP/1.1 socket', '1.1', 'socket', false],
    ['an HTTP/2 request', '2', 'req', true],
    ['an HTTP/2 response', '2', 'res', true],
  ])('%s', async (_name, version, part, want) => {
    expect(overHttp2((await exchange(version))[part])).toBe(want);
  });
});
