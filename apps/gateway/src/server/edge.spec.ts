import { FastifyAdapter } from '@nestjs/platform-fastify';
import { dropAdapterPassThroughHooks } from './edge';

/** Which hooks run for one request through a Nest FastifyAdapter's instance, and whether the adapter's hooks were dropped. */
async function hooksRun(drop: boolean): Promise<{ ran: string[]; dropped?: boolean }> {
  const adapter = new FastifyAdapter({ logger: false, skipMiddie: true });
  const fastify = adapter.getInstance();
  let dropped: boolean | undefined;
  if (drop) dropAdapterPassThroughHooks(fastify, (d) => (dropped = d));
  const ran: string[] = [];
  fastify.addHook('onRequest', (_req, _reply, done) => (ran.push('own onRequest'), done()));
  fastify.addHook('onResponse', (_req, _reply, done) => (ran.push('own onResponse'), done()));
  await adapter.init();
  fastify.get('/', (_req, reply) => void reply.send('ok'));
  // What the adapter's pass-through hooks would forward to (the gateway sets none: set here to see them run).
  adapter.setOnRequestHook((_req, _reply, done) => (ran.push('adapter onRequest'), done()));
  adapter.setOnResponseHook((_req, _reply, done) => (ran.push('adapter onResponse'), done()));
  const res = await fastify.inject('/');
  expect(res.body).toBe('ok');
  await fastify.close();
  return { ran, dropped };
}

describe('dropAdapterPassThroughHooks', () => {
  it.each([
    { name: 'kept: the adapter forwards to its hooks', drop: false, want: { ran: ['adapter onRequest', 'own onRequest', 'adapter onResponse', 'own onResponse'] } },
    { name: 'dropped: only hooks added on the instance run', drop: true, want: { ran: ['own onRequest', 'own onResponse'], dropped: true } },
  ])('$name', async ({ drop, want }) => {
    expect(await hooksRun(drop)).toEqual(want);
  });
});
