import { request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { StatusError } from '@orch/apimachinery';
import { BODY_CHUNK_BYTES } from './body-stream';
import { Encoder, errorInRequestedGroup, inRequestedGroup } from './encode';

const SERVED = 'rbac.authorization.orch.io';
const ALIAS = 'rbac.authorization.k8s.io';

describe('replies in the group the client asked for (*.k8s.io alias paths)', () => {
  it.each([
    { name: 'object', body: { apiVersion: `${SERVED}/v1`, kind: 'Role' }, want: { apiVersion: `${ALIAS}/v1`, kind: 'Role' } },
    {
      name: 'list and its items',
      body: { apiVersion: `${SERVED}/v1`, kind: 'RoleList', items: [{ apiVersion: `${SERVED}/v1`, kind: 'Role' }] },
      want: { apiVersion: `${ALIAS}/v1`, kind: 'RoleList', items: [{ apiVersion: `${ALIAS}/v1`, kind: 'Role' }] },
    },
    {
      name: 'Status details of a delete',
      body: { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'r', group: SERVED, kind: 'roles' } },
      want: { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name: 'r', group: ALIAS, kind: 'roles' } },
    },
  ])('$name', ({ body, want }) => {
    expect(inRequestedGroup(body, SERVED, ALIAS)).toEqual(want);
    expect(inRequestedGroup(body, SERVED, SERVED)).toBe(body);
  });

  it('errors name the alias in their message and details', () => {
    const err = StatusError.notFound({ group: SERVED, resource: 'roles' }, 'r');
    const got = errorInRequestedGroup(err, SERVED, ALIAS) as StatusError;
    expect(got.toStatus()).toMatchObject({ code: 404, reason: 'NotFound', message: `roles.${ALIAS} "r" not found`, details: { group: ALIAS, name: 'r' } });
    expect(errorInRequestedGroup(err, SERVED, SERVED)).toBe(err);
  });
});

describe('Encoder.sendText', () => {
  const json = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'é' }, data: { k: '✓' } });
  const big = JSON.stringify({ data: { k: 'x'.repeat(BODY_CHUNK_BYTES) } });
  let app: FastifyInstance;
  let port: number;
  let body: string | Buffer = '';
  /** Whether the last sendText returned its status at once or as a promise. */
  let answeredAt = '';

  beforeAll(async () => {
    app = Fastify({ logger: false });
    const encoder = new Encoder({ compression: true });
    app.get('/', async (req, reply) => {
      const sent = encoder.sendText(req, reply, 200, body, 'application/json');
      answeredAt = sent instanceof Promise ? 'later' : 'now';
      expect(await sent).toBe(200);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  const get = (headers: Record<string, string> = {}) =>
    new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      request({ port, host: '127.0.0.1', path: '/', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });

  /** The same body as text and as bytes. */
  const both = (text: string) => [
    { name: 'text', send: text as string | Buffer },
    { name: 'bytes', send: Buffer.from(text) },
  ];

  // Written at once (no promise) unless gzip or more than one chunk.
  it.each([
    { name: 'small text', send: json as string | Buffer, headers: {} as Record<string, string>, at: 'now' },
    { name: 'small bytes', send: Buffer.from(json), headers: {}, at: 'now' },
    { name: 'gzip asked', send: json as string | Buffer, headers: { 'accept-encoding': 'gzip' }, at: 'later' },
    { name: 'more than one chunk', send: big as string | Buffer, headers: {}, at: 'later' },
  ])('$name: status $at', async ({ send, headers, at }) => {
    body = send;
    const res = await get(headers);
    expect(res.body.length).toBeGreaterThan(0);
    expect(answeredAt).toBe(at);
  });

  it.each(both(json))('writes $name with the content type as given and its length in bytes', async ({ send }) => {
    body = send;
    const res = await get();
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(json)));
    expect(res.body.toString('utf8')).toBe(json);
  });

  it.each(both(json))('gzips $name when asked', async ({ send }) => {
    body = send;
    const res = await get({ 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-type']).toBe('application/json');
    expect(gunzipSync(res.body).toString('utf8')).toBe(json);
  });

  it.each(both(big))('writes $name of more than one chunk in chunks', async ({ send }) => {
    body = send;
    const res = await get();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.toString('utf8')).toBe(big);
  });
});
