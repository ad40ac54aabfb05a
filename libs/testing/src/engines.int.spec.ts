import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import { connect, StringCodec } from 'nats';
import { existsSync } from 'node:fs';
import { startEtcd, startNats, startRedis } from './engines';
import { removeDir, tempDir } from './temp';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startEtcd', () => {
  it('serves puts and gets, and stop() removes the process and its temp data dir', async () => {
    const etcd = await startEtcd();
    expect(etcd.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const client = new Etcd3({ hosts: etcd.endpoint });
    try {
      await client.put('k').value('v');
      expect(await client.get('k').string()).toBe('v');
    } finally {
      client.close();
    }
    await etcd.stop();
    expect(isAlive(etcd.pid)).toBe(false);
    expect(existsSync(etcd.dataDir)).toBe(false);
  });

  it('keeps a caller-owned data dir across kill9() and restart', async () => {
    const dataDir = await tempDir('etcd-own-');
    try {
      const first = await startEtcd({ dataDir });
      let client = new Etcd3({ hosts: first.endpoint });
      await client.put('durable').value('yes');
      client.close();
      await first.kill9();
      expect(isAlive(first.pid)).toBe(false);

      const second = await startEtcd({ dataDir });
      client = new Etcd3({ hosts: second.endpoint });
      try {
        expect(await client.get('durable').string()).toBe('yes');
      } finally {
        client.close();
        await second.stop();
      }
    } finally {
      await removeDir(dataDir);
    }
  });
});

describe('startNats', () => {
  it.each([
    { name: 'core', input: { jetstream: false } },
    { name: 'jetstream', input: { jetstream: true } },
  ])('$name: publish and subscribe, then stop leaves no process', async ({ input }) => {
    const server = await startNats(input);
    const nc = await connect({ servers: server.url });
    try {
      const sc = StringCodec();
      const sub = nc.subscribe('orch.test', { max: 1 });
      nc.publish('orch.test', sc.encode('hello'));
      for await (const msg of sub) expect(sc.decode(msg.data)).toBe('hello');
      if (input.jetstream) {
        const jsm = await nc.jetstreamManager();
        await jsm.streams.add({ name: 'ORCH', subjects: ['orch.js.>'] });
        const ack = await nc.jetstream().publish('orch.js.a', sc.encode('x'));
        expect(ack.seq).toBe(1);
      }
    } finally {
      await nc.close();
      await server.stop();
    }
    expect(isAlive(server.pid)).toBe(false);
    if (server.storeDir) expect(existsSync(server.storeDir)).toBe(false);
  });
});

describe('startRedis', () => {
  it('answers commands, and stop leaves no process', async () => {
    const server = await startRedis();
    const redis = new Redis(server.url);
    try {
      expect(await redis.ping()).toBe('PONG');
      await redis.set('k', 'v');
      expect(await redis.get('k')).toBe('v');
    } finally {
      redis.disconnect();
      await server.stop();
    }
    expect(isAlive(server.pid)).toBe(false);
  });
});
