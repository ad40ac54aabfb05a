import { join } from 'node:path';
import { Catalog } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { openSqliteStore, type Store } from '@orch/storage';
import { removeDir, tempDir } from '@orch/testing';
import { WatchCache } from '@orch/watch';
import { GenericStore } from '../registry/generic-store';
import { resolveKind } from '../registry/kinds';
import type { RequestContext, Strategy } from '../registry/strategy';
import { AdmissionChain, admissionDenied, type AdmissionAttributes, type AdmissionPlugin } from './admit';

// The admit stage's contract, through the real generic store on a real SQLite store: mutating
// plugins run on the incoming object, then the object is checked against its schema again,
// then the strategy validates it, then validating plugins run; for updates, patches and
// deletes the stored object is the old object, inside the registry's read-modify-write.

type Call = { plugin: string; hook: 'mutate' | 'validate'; operation: string; name: string; hasOld: boolean; label?: string };

/** A test plugin that records its calls; `mutateWith` changes the object it is given. */
function recordingPlugin(name: string, calls: Call[], mutateWith?: (obj: KubeObject) => void, deny?: (a: AdmissionAttributes) => string | undefined): AdmissionPlugin {
  const record = (hook: 'mutate' | 'validate', a: AdmissionAttributes) =>
    calls.push({ plugin: name, hook, operation: a.operation, name: a.name, hasOld: !!a.oldObject, label: a.object?.metadata?.labels?.stage });
  return {
    name,
    handles: (_op, resource) => resource.resource === 'configmaps',
    mutate(a) {
      record('mutate', a);
      if (a.object && mutateWith) mutateWith(a.object);
      return { warnings: [`${name} looked`] };
    },
    validate(a) {
      record('validate', a);
      const why = deny?.(a);
      if (why) throw admissionDenied(a, why);
    },
  };
}

describe('admission inside the generic store', () => {
  let dir: string;
  let store: Store;
  let cache: WatchCache;
  let configMaps: GenericStore;
  const strategyCalls: string[] = [];

  beforeAll(async () => {
    dir = await tempDir('admit-');
    store = await openSqliteStore(join(dir, 'db.sqlite'));
    cache = new WatchCache(store, { prefix: '/registry/', retentionMs: 60_000 });
    await cache.start();
    const def = new Catalog().lookup('', 'v1', 'configmaps')!;
    const kind = resolveKind(def, { k8sCompatibility: true });
    const base = kind.strategy;
    // The strategy records when it validates, to place admission around it.
    const strategy: Strategy = {
      ...base,
      validate: (obj, ctx) => (strategyCalls.push(`validate:${obj.metadata.labels?.stage ?? ''}`), base.validate?.(obj, ctx) ?? []),
      validateUpdate: (obj, old, ctx) => (strategyCalls.push(`validateUpdate:${obj.metadata.labels?.stage ?? ''}`), base.validateUpdate?.(obj, old, ctx) ?? []),
    };
    configMaps = new GenericStore(def, { ...kind, strategy }, store, cache, {
      continueTokenLifetimeMs: 60_000,
      tooLargeResourceVersionWaitMs: 1000,
      bookmarkIntervalMs: 60_000,
      watchListEnabled: false,
    });
  });
  afterAll(async () => {
    cache?.stop();
    await store?.close();
    await removeDir(dir);
  });

  function context(chain: AdmissionChain, name = ''): RequestContext {
    const ctx: RequestContext = { user: { username: 'alice', groups: ['system:authenticated'] }, namespace: 'default', dryRun: false, warnings: [] };
    ctx.admission = chain.forRequest({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      subresource: '',
      namespace: 'default',
      name,
      userInfo: ctx.user,
      dryRun: false,
      warnings: ctx.warnings,
    });
    return ctx;
  }

  const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: '1' } }) as KubeObject;

  it('create: mutating plugins in order, then strategy validation, then validating plugins', async () => {
    const calls: Call[] = [];
    strategyCalls.length = 0;
    const chain = AdmissionChain.ordered([
      recordingPlugin('Second', calls, (o) => (o.metadata.labels = { ...o.metadata.labels, stage: `${o.metadata.labels?.stage}.second` })),
      recordingPlugin('First', calls, (o) => (o.metadata.labels = { stage: 'first' })),
    ]);
    const ctx = context(chain);
    const { object } = await configMaps.create('default', cm('c1'), ctx);
    expect(object.metadata.labels).toEqual({ stage: 'first.second' });
    expect(calls.map((c) => `${c.hook}:${c.plugin}:${c.operation}:${c.label ?? ''}`)).toEqual([
      'mutate:First:CREATE:',
      'mutate:Second:CREATE:first',
      'validate:First:CREATE:first.second',
      'validate:Second:CREATE:first.second',
    ]);
    expect(strategyCalls).toEqual(['validate:first.second']);
    expect(ctx.warnings).toEqual(['First looked', 'Second looked']);
  });

  it('a mutation that breaks the schema is refused before validating plugins run', async () => {
    const calls: Call[] = [];
    const chain = new AdmissionChain([recordingPlugin('Breaker', calls, (o) => ((o as unknown as { data: unknown }).data = 'not a map'))]);
    const err = await configMaps.create('default', cm('c2'), context(chain)).catch((e) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(400);
    expect(calls.map((c) => c.hook)).toEqual(['mutate']);
    await expect(configMaps.get('default', 'c2')).rejects.toMatchObject({ code: 404 });
  });

  it('a validating plugin that denies stops the write with its 403', async () => {
    const chain = new AdmissionChain([recordingPlugin('Deny', [], undefined, () => 'no config maps today')]);
    const err = await configMaps.create('default', cm('c3'), context(chain)).catch((e) => e);
    expect((err as StatusError).code).toBe(403);
    expect((err as StatusError).message).toBe('configmaps "c3" is forbidden: no config maps today');
    await expect(configMaps.get('default', 'c3')).rejects.toMatchObject({ code: 404 });
  });

  it.each([
    { name: 'update', write: (s: GenericStore, ctx: RequestContext) => s.update('default', 'u1', { ...cm('u1'), data: { a: '2' } }, ctx) },
    { name: 'patch', write: (s: GenericStore, ctx: RequestContext) => s.patch('default', 'u1', (cur) => ({ ...cur, data: { a: '3' } }), ctx) },
    { name: 'apply', write: (s: GenericStore, ctx: RequestContext) => s.apply('default', 'u1', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'u1' }, data: { a: '4' } } as KubeObject, true, { ...ctx, fieldManager: 'test' }) },
  ])('$name: UPDATE with the stored object as old object, mutate → strategy → validate', async ({ write }) => {
    if (!(await configMaps.get('default', 'u1').catch(() => undefined))) await configMaps.create('default', cm('u1'), context(new AdmissionChain([])));
    const calls: Call[] = [];
    strategyCalls.length = 0;
    const chain = new AdmissionChain([recordingPlugin('Labeler', calls, (o) => (o.metadata.labels = { stage: 'mutated' }))]);
    const res = await write(configMaps, context(chain, 'u1'));
    expect(res.object.metadata.labels).toEqual({ stage: 'mutated' });
    expect(calls.map((c) => `${c.hook}:${c.operation}:${c.name}:${c.hasOld}`)).toEqual(['mutate:UPDATE:u1:true', 'validate:UPDATE:u1:true']);
    expect(strategyCalls).toEqual(['validateUpdate:mutated']);
  });

  it('delete: DELETE with the stored object, and a denial keeps the object', async () => {
    await configMaps.create('default', cm('d1'), context(new AdmissionChain([])));
    const calls: Call[] = [];
    const chain = new AdmissionChain([recordingPlugin('Keeper', calls, undefined, (a) => (a.operation === 'DELETE' ? 'keep it' : undefined))]);
    await expect(configMaps.delete('default', 'd1', {}, context(chain, 'd1'))).rejects.toMatchObject({ code: 403 });
    expect(calls.map((c) => `${c.hook}:${c.operation}:${c.hasOld}`)).toEqual(['mutate:DELETE:true', 'validate:DELETE:true']);
    expect((await configMaps.get('default', 'd1')).metadata.name).toBe('d1');
  });

  it.each([
    { asks: true, want: ['mutate:First:', 'mutate:Asker:first', 'mutate:First:first.asked', 'mutate:Asker:first.asked', 'validate:First:first.asked', 'validate:Asker:first.asked'] },
    { asks: false, want: ['mutate:First:', 'mutate:Asker:first', 'validate:First:first.asked', 'validate:Asker:first.asked'] },
  ])('a plugin asking for reinvocation ($asks) has every mutating plugin run once more, told so', async ({ asks, want }) => {
    const calls: Call[] = [];
    const passes: boolean[] = [];
    const asker = recordingPlugin('Asker', calls, (o) => (o.metadata.labels = { stage: o.metadata.labels?.stage?.endsWith('.asked') ? o.metadata.labels.stage : `${o.metadata.labels?.stage}.asked` }));
    const chain = new AdmissionChain([
      recordingPlugin('First', calls, (o) => (o.metadata.labels = { stage: o.metadata.labels?.stage ?? 'first' })),
      {
        ...asker,
        mutate(a) {
          passes.push(a.reinvocation!.isReinvoke);
          if (asks && !a.reinvocation!.isReinvoke) a.reinvocation!.shouldReinvoke = true;
          return asker.mutate!(a);
        },
      },
    ]);
    const ctx = context(chain);
    await configMaps.create('default', cm(`re-${asks}`), ctx);
    expect(calls.map((c) => `${c.hook}:${c.plugin}:${c.label ?? ''}`)).toEqual(want);
    expect(passes).toEqual(asks ? [false, true] : [false]);
    // the second pass repeats warnings, said once
    expect(ctx.warnings).toEqual(['First looked', 'Asker looked']);
  });

  it('plugins that do not handle the resource are not called', async () => {
    const calls: Call[] = [];
    const plugin = { ...recordingPlugin('Pods only', calls), handles: () => false };
    await configMaps.create('default', cm('n1'), context(new AdmissionChain([plugin])));
    expect(calls).toEqual([]);
  });
});
