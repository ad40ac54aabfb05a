import { Catalog } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import type { Store } from '@orch/storage';
import type { WatchCache } from '@orch/watch';
import { DEFAULT_CONFLICT_RETRY, GenericStore, type ConflictRetryPolicy } from './generic-store';
import { resolveKind } from './kinds';
import { openRegistryFixture, TEST_REGISTRY_OPTIONS, type RegistryFixture } from './registry-fixture';
import type { RequestContext, WriteAdmission } from './strategy';

const cm = (name: string, data: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }) as KubeObject;
const key = (name: string) => `/registry/core/configmaps/ns/${name}`;

/**
 * Writes that lose races (upstream GuaranteedUpdate): an unconditional write re-reads and
 * re-applies until it lands; a conditional one is a 409 at once. The races are made, not
 * hoped for: a rival writes the object right before each of the first N writes of the
 * request under test (from its admission, which runs between the read and the write).
 */
describe('unconditional writes that lose races (real SQLite store)', () => {
  let fixture: RegistryFixture;
  let store: Store;
  let cache: WatchCache;
  const registry = (conflictRetry?: ConflictRetryPolicy) => {
    const def = new Catalog().lookup('', 'v1', 'configmaps')!;
    return new GenericStore(def, resolveKind(def, { k8sCompatibility: false }), store, cache, { ...TEST_REGISTRY_OPTIONS, conflictRetry });
  };

  /** Another client's unconditional write: one more data key on the stored object. */
  const rivalWrite = async (name: string, n: number) => {
    const kv = (await store.get(key(name)))!;
    const obj = JSON.parse(kv.value) as KubeObject & { data: Record<string, string> };
    obj.data = { ...obj.data, [`rival${n}`]: String(n) };
    await store.update(key(name), JSON.stringify(obj));
  };

  /** A request context whose admission lets the rival write before each of its first `races` writes. */
  const racedBy = (name: string, races: number) => {
    let attempts = 0;
    const admission: WriteAdmission = {
      mutate: async () => undefined,
      validate: async () => {
        if (attempts++ < races) await rivalWrite(name, attempts);
      },
    };
    const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, namespace: 'ns', dryRun: false, warnings: [], admission };
    return { ctx, attempts: () => attempts };
  };

  beforeAll(async () => {
    fixture = await openRegistryFixture('conflict-retry');
    ({ store, cache } = fixture);
  });
  afterAll(() => fixture.close());

  // 40 lost races: more than any small fixed retry limit allows, far fewer than the safety net.
  // The default bound without its pauses (they spread real writers out; here they would only add time).
  const noPauses = { ...DEFAULT_CONFLICT_RETRY, initialDelayMs: 0, maxDelayMs: 0 };
  it.each([
    {
      name: 'merge patch without resourceVersion',
      write: (reg: GenericStore, name: string, ctx: RequestContext) => reg.patch('ns', name, (cur) => ({ ...cur, data: { ...(cur as { data?: object }).data, mine: 'yes' } }) as KubeObject, ctx),
      wantData: (races: number) => ({ ...rivals(races), mine: 'yes' }),
    },
    {
      name: 'update (PUT) without resourceVersion',
      write: (reg: GenericStore, name: string, ctx: RequestContext) => reg.update('ns', name, cm(name, { mine: 'yes' }), ctx),
      wantData: () => ({ mine: 'yes' }),
    },
  ])('$name lands after losing 40 races, applied to the latest state', async ({ write, wantData }) => {
    const reg = registry(noPauses);
    const name = `lands-${Math.random().toString(36).slice(2, 8)}`;
    await reg.create('ns', cm(name), racedBy(name, 0).ctx);
    const raced = racedBy(name, 40);
    const res = await write(reg, name, raced.ctx);
    expect(raced.attempts()).toBe(41);
    const stored = JSON.parse((await store.get(key(name)))!.value) as { data: Record<string, string> };
    expect(stored.data).toEqual(wantData(40));
    expect((res.object as unknown as { data: object }).data).toEqual(stored.data);
  });

  it('delete without preconditions lands after losing 40 races', async () => {
    const reg = registry(noPauses);
    const name = `del-${Math.random().toString(36).slice(2, 8)}`;
    await reg.create('ns', cm(name), racedBy(name, 0).ctx);
    const raced = racedBy(name, 40);
    // DELETE admission validates once per attempt too (before the store delete).
    const res = await reg.delete('ns', name, {}, raced.ctx);
    expect(res.deleted).toBe(true);
    expect(raced.attempts()).toBe(41);
    expect(await store.get(key(name))).toBeUndefined();
  });

  it('a patch that names its resourceVersion is a 409 at the first lost race', async () => {
    const reg = registry();
    const name = `cond-${Math.random().toString(36).slice(2, 8)}`;
    const created = await reg.create('ns', cm(name), racedBy(name, 0).ctx);
    const raced = racedBy(name, 1);
    const err = await reg
      .patch('ns', name, (cur) => ({ ...cur, metadata: { ...cur.metadata, resourceVersion: created.object.metadata.resourceVersion }, data: { mine: 'yes' } }) as KubeObject, raced.ctx)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(409);
    expect(raced.attempts()).toBe(1);
  });

  it('the safety net against livelock: a write that loses every race gets 429 with Retry-After and writes nothing', async () => {
    const reg = registry({ maxAttempts: 5, initialDelayMs: 0, maxDelayMs: 0 });
    const name = `livelock-${Math.random().toString(36).slice(2, 8)}`;
    await reg.create('ns', cm(name), racedBy(name, 0).ctx);
    const raced = racedBy(name, Number.POSITIVE_INFINITY);
    const err = await reg.patch('ns', name, (cur) => ({ ...cur, data: { mine: 'yes' } }) as KubeObject, raced.ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect({ code: (err as StatusError).code, reason: (err as StatusError).reason, headers: (err as StatusError).headers }).toEqual({ code: 429, reason: 'TooManyRequests', headers: { 'Retry-After': '1' } });
    expect((err as StatusError).message).toContain('configmaps "');
    expect(raced.attempts()).toBe(5);
    expect(JSON.parse((await store.get(key(name)))!.value).data).toEqual(rivals(5));
  });

  it('20 concurrent unconditional patches of one object all land', async () => {
    const reg = registry();
    const name = `busy-${Math.random().toString(36).slice(2, 8)}`;
    await reg.create('ns', cm(name), racedBy(name, 0).ctx);
    await Promise.all(Array.from({ length: 20 }, (_, i) => reg.patch('ns', name, (cur) => ({ ...cur, data: { ...(cur as { data?: object }).data, [`k${i}`]: String(i) } }) as KubeObject, racedBy(name, 0).ctx)));
    expect(Object.keys(JSON.parse((await store.get(key(name)))!.value).data).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`).sort());
  });
});

function rivals(n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`rival${i + 1}`, String(i + 1)]));
}
