import { StatusError } from '../errors';
import type { KubeObject } from '../meta';
import { treeSchema, type SchemaTree } from '../schema-walker';
import { FieldSet, fieldElement } from './field-set';
import { FieldManager, managerFromUserAgent, validateFieldManager } from './field-manager';

const scalar: SchemaTree = { shape: { kind: 'scalar' } };
const schema = treeSchema({
  shape: { kind: 'struct' },
  fields: {
    apiVersion: scalar,
    kind: scalar,
    metadata: {
      shape: { kind: 'struct' },
      fields: { name: scalar, namespace: scalar, uid: scalar, labels: { shape: { kind: 'map' }, values: scalar }, finalizers: { shape: { kind: 'list', listType: 'set' }, items: scalar } },
    },
    data: { shape: { kind: 'map' }, values: scalar },
    items: { shape: { kind: 'list', listType: 'map', listMapKeys: ['name'] }, items: { shape: { kind: 'struct' }, fields: { name: scalar, value: scalar } } },
    status: { shape: { kind: 'struct' }, fields: { phase: scalar } },
  },
});
const fm = new FieldManager(schema, 'v1');

/** An object or configuration without apiVersion and kind (added by `obj`). */
type Obj = Record<string, unknown>;

/** A step of a scenario: an apply of a configuration, or a non-apply write producing `next`. */
type Step =
  | { apply: Obj; by: string; force?: boolean; at?: number }
  | { update: (live: KubeObject) => Obj; by: string; subresource?: string; at?: number };

const T0 = Date.UTC(2024, 0, 1);
const time = (s = 0) => new Date(T0 + s * 1000).toISOString().replace('.000Z', 'Z');
const obj = (o: Obj): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', ...o, metadata: { name: 'x', ...((o.metadata as object | undefined) ?? {}) } });

/** Runs the steps from an absent object; returns the final object. */
function run(steps: Step[], ignored?: FieldSet): KubeObject | undefined {
  let live: KubeObject | undefined;
  for (const s of steps) {
    const now = time(s.at);
    if ('apply' in s) {
      live = fm.apply(live, obj(s.apply), { manager: s.by, now, force: !!s.force, ignored });
    } else {
      const next = obj(s.update(live ?? ({} as KubeObject)));
      const managedFields = fm.update(live, next, { manager: s.by, now, subresource: s.subresource, ignored });
      const { managedFields: _m, ...metadata } = next.metadata;
      live = { ...next, metadata: managedFields ? { ...metadata, managedFields } : metadata };
    }
  }
  return live;
}

/** `manager/Operation[/subresource]` → FieldsV1, in entry order. */
function owners(o: KubeObject | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of o?.metadata.managedFields ?? []) out[[e.manager, e.operation, e.subresource].filter(Boolean).join('/')] = e.fieldsV1;
  return out;
}

function failure(steps: Step[]): StatusError {
  try {
    run(steps);
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

const data = (...keys: string[]) => ({ 'f:data': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) });
const keep = (live: KubeObject): Obj => live;
const withData = (d: Record<string, string>) => (live: KubeObject): Obj => ({ ...live, data: { ...(live.data as Record<string, string> | undefined), ...d } });

describe('FieldManager: SPEC "Apply ownership"', () => {
  it.each([
    {
      name: 'apply by B with the same value: ownership shared',
      steps: [{ apply: { data: { k: 'v' } }, by: 'A' }, { apply: { data: { k: 'v' } }, by: 'B' }],
      data: { k: 'v' },
      owners: { 'A/Apply': data('k'), 'B/Apply': data('k') },
    },
    {
      name: 'apply by B with a different value and force: B sole owner, A loses the field',
      steps: [{ apply: { data: { k: 'v', o: '1' } }, by: 'A' }, { apply: { data: { k: 'w' } }, by: 'B', force: true }],
      data: { k: 'w', o: '1' },
      owners: { 'A/Apply': data('o'), 'B/Apply': data('k') },
    },
    {
      name: 'owner applies without the field, no other owner: removed',
      steps: [{ apply: { data: { k: 'v', o: '1' } }, by: 'A' }, { apply: { data: { o: '1' } }, by: 'A' }],
      data: { o: '1' },
      owners: { 'A/Apply': data('o') },
    },
    {
      name: 'owner applies without the field, another owner: kept',
      steps: [{ apply: { data: { k: 'v', o: '1' } }, by: 'A' }, { apply: { data: { k: 'v' } }, by: 'B' }, { apply: { data: { o: '1' } }, by: 'A' }],
      data: { k: 'v', o: '1' },
      owners: { 'A/Apply': data('o'), 'B/Apply': data('k') },
    },
    {
      name: 'non-apply write changes a field: ownership moves, no conflict',
      steps: [{ apply: { data: { k: 'v', o: '1' } }, by: 'A' }, { update: withData({ k: 'w' }), by: 'editor' }],
      data: { k: 'w', o: '1' },
      owners: { 'A/Apply': data('o'), 'editor/Update': data('k') },
    },
    {
      name: 'non-apply write removes a field: nobody owns it',
      steps: [{ apply: { data: { k: 'v', o: '1' } }, by: 'A' }, { update: (l: KubeObject) => ({ ...l, data: { o: '1' } }), by: 'editor' }],
      data: { o: '1' },
      owners: { 'A/Apply': data('o') },
    },
    {
      name: 'a list item dropped by its applier is removed whole',
      steps: [{ apply: { items: [{ name: 'a', value: '1' }, { name: 'b' }] }, by: 'A' }, { apply: { items: [{ name: 'b' }] }, by: 'A' }],
      items: [{ name: 'b' }],
      owners: { 'A/Apply': { 'f:items': { 'k:{"name":"b"}': { '.': {}, 'f:name': {} } } } },
    },
    {
      name: 'apply with only apiVersion and kind: no-op for a new manager',
      steps: [{ apply: { data: { k: 'v' } }, by: 'A' }, { apply: {}, by: 'B' }],
      data: { k: 'v' },
      owners: { 'A/Apply': data('k') },
    },
    {
      name: 'nulls in a configuration are not set',
      steps: [{ apply: { data: { k: 'v', n: null as unknown as string } }, by: 'A' }],
      data: { k: 'v' },
      owners: { 'A/Apply': data('k') },
    },
  ])('$name', ({ steps, owners: want, ...rest }) => {
    const got = run(steps as Step[])!;
    if ('data' in rest) expect(got.data).toEqual(rest.data);
    if ('items' in rest) expect(got.items).toEqual(rest.items);
    expect(owners(got)).toEqual(want);
  });

  it.each([
    {
      name: 'one field',
      steps: [{ apply: { data: { k: 'v' } }, by: 'A' }, { apply: { data: { k: 'w' } }, by: 'B' }],
      message: 'Apply failed with 1 conflict: conflict with "A": .data.k',
      causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "A"', field: '.data.k' }],
    },
    {
      name: 'several managers and fields, updaters with their apiVersion',
      steps: [
        { apply: { data: { a: '1', b: '1' } }, by: 'A' },
        { update: withData({ c: '1' }), by: 'editor' },
        { update: (l: KubeObject) => ({ ...l, status: { phase: 'x' } }), by: 'ctrl', subresource: 'status' },
        { apply: { data: { a: '2', b: '2', c: '2' }, status: { phase: 'y' } }, by: 'B' },
      ],
      message: 'Apply failed with 4 conflicts: conflicts with "A":\n- .data.a\n- .data.b\nconflicts with "ctrl" with subresource "status" using v1:\n- .status.phase\nconflicts with "editor" using v1:\n- .data.c',
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "A"', field: '.data.a' },
        { reason: 'FieldManagerConflict', message: 'conflict with "A"', field: '.data.b' },
        { reason: 'FieldManagerConflict', message: 'conflict with "ctrl" with subresource "status" using v1', field: '.status.phase' },
        { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.c' },
      ],
    },
  ])('conflicts: $name', ({ steps, message, causes }) => {
    const err = failure(steps as Step[]);
    expect(err.toStatus()).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Conflict', code: 409, message, details: { causes } });
  });
});

describe('FieldManager: Update entries', () => {
  it('a create owns everything it set; maps carry "."', () => {
    const got = run([{ update: () => ({ metadata: { labels: { a: '1' } }, data: { k: 'v' } }), by: 'creator' }]);
    expect(got?.metadata.managedFields).toEqual([
      { manager: 'creator', operation: 'Update', apiVersion: 'v1', time: time(), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } } },
    ]);
  });

  it('updates of one manager merge into one entry whose time moves; no change keeps it', () => {
    const got = run([
      { update: () => ({ data: { a: '1' } }), by: 'm', at: 0 },
      { update: withData({ b: '1' }), by: 'm', at: 5 },
      { update: keep, by: 'm', at: 9 },
    ]);
    expect(got?.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'm', time: time(5), fieldsV1: { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } } })]);
  });

  it('entries sort Apply first, then by time and manager', () => {
    const got = run([
      { update: () => ({ data: { a: '1' } }), by: 'z', at: 0 },
      { update: withData({ b: '1' }), by: 'y', at: 3 },
      { apply: { data: { c: '1' } }, by: 'x', at: 9 },
    ]);
    expect(got?.metadata.managedFields?.map((e) => `${e.manager}/${e.operation}`)).toEqual(['x/Apply', 'z/Update', 'y/Update']);
  });

  it('a manager that applies and updates has two entries', () => {
    const got = run([{ apply: { data: { a: '1' } }, by: 'm' }, { update: withData({ b: '1' }), by: 'm' }]);
    expect(owners(got)).toEqual({ 'm/Apply': data('a'), 'm/Update': data('b') });
  });

  it('subresource writes are recorded with the subresource and cannot set managedFields', () => {
    const got = run([
      { update: () => ({ data: { a: '1' } }), by: 'creator' },
      { update: (l: KubeObject) => ({ ...l, metadata: { ...l.metadata, managedFields: [{}] }, status: { phase: 'Up' } }), by: 'ctrl', subresource: 'status' },
    ]);
    expect(owners(got)).toEqual({ 'creator/Update': { 'f:data': { '.': {}, 'f:a': {} } }, 'ctrl/Update/status': { 'f:status': { 'f:phase': {} } } });
  });

  it('writers may set managedFields directly', () => {
    const edited = [{ manager: 'other', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: data('a') }];
    const got = run([{ update: () => ({ data: { a: '1' } }), by: 'creator' }, { update: (l: KubeObject) => ({ ...l, metadata: { ...l.metadata, managedFields: edited } }), by: 'editor' }]);
    expect(owners(got)).toEqual({ 'other/Apply': data('a') });
  });

  it('ignored paths (status through the main resource) are never owned', () => {
    const status = FieldSet.fromPaths([[fieldElement('status')]]);
    const got = run([{ update: () => ({ data: { a: '1' }, status: { phase: 'x' } }), by: 'creator' }, { apply: { data: { a: '1' }, status: { phase: 'y' } }, by: 'A' }], status);
    expect(owners(got)).toEqual({ 'A/Apply': data('a'), 'creator/Update': { 'f:data': { '.': {}, 'f:a': {} } } });
  });
});

describe('FieldManager: creates of objects alike', () => {
  const STATUS = FieldSet.fromPaths([[fieldElement('status')]]);
  /** A create's managedFields from a manager that made `before` first, and from a fresh manager (which walks `created`). */
  const creates = (before: Obj, created: Obj, ignored?: FieldSet) => {
    const seasoned = new FieldManager(schema, 'v1');
    seasoned.update(undefined, obj(before), { manager: 'first', now: time(0), ignored });
    const after = seasoned.update(undefined, obj(created), { manager: 'second', now: time(1), subresource: 'status', ignored });
    return { after, fresh: new FieldManager(schema, 'v1').update(undefined, obj(created), { manager: 'second', now: time(1), subresource: 'status', ignored }) };
  };
  it.each([
    // The create's entry is remembered per outline: a later create of the same outline gets the same fields.
    { name: 'same outline, other values', before: { data: { a: '1' } }, created: { data: { a: '2' }, metadata: {} } },
    { name: 'same keys, other nesting', before: { data: { a: '1' } }, created: { data: {} } },
    { name: 'a key that spells an outline', before: { data: { 'a:.,b': '1' } }, created: { data: { a: '1', b: '1' } } },
    { name: 'a key with an outline character', before: { data: { a: '1', b: '1' } }, created: { data: { 'a:.,b': '1' } } },
    { name: 'a field more', before: { data: { a: '1' } }, created: { data: { a: '1' }, metadata: { labels: { x: 'y' } } } },
    { name: 'nothing owned', before: { data: { a: '1' } }, created: {} },
    // Lists are never remembered: their path elements come from their items.
    { name: 'a set list', before: { metadata: { finalizers: ['a'] } }, created: { metadata: { finalizers: ['b', 'c'] } } },
    { name: 'a keyed list', before: { items: [{ name: 'a', value: '1' }] }, created: { items: [{ name: 'b' }] } },
    { name: 'no list after a list', before: { metadata: { finalizers: ['a'] } }, created: { metadata: {} } },
  ])('$name: the entry of a fresh manager', ({ before, created }) => {
    const { after, fresh } = creates(before, created);
    expect(after).toEqual(fresh);
    expect(creates(before, created, STATUS)).toEqual({ after: fresh, fresh });
  });

  it('an ignored set is part of what is remembered', () => {
    const m = new FieldManager(schema, 'v1');
    const created = obj({ status: { phase: 'a' }, data: { a: '1' } });
    const [ignoring] = m.update(undefined, created, { manager: 'm', now: time(0), ignored: STATUS })!;
    const [owning] = m.update(undefined, created, { manager: 'm', now: time(0) })!;
    expect([ignoring.fieldsV1, owning.fieldsV1]).toEqual([{ 'f:data': { '.': {}, 'f:a': {} } }, { 'f:data': { '.': {}, 'f:a': {} }, 'f:status': { 'f:phase': {} } }]);
  });

  it('each create gets its own fieldsV1 object', () => {
    const m = new FieldManager(schema, 'v1');
    const [a] = m.update(undefined, obj({ data: { a: '1' } }), { manager: 'm', now: time(0) })!;
    (a.fieldsV1 as Record<string, unknown>)['f:data'] = 'changed';
    const [b] = m.update(undefined, obj({ data: { a: '1' } }), { manager: 'm', now: time(0) })!;
    expect(b.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });
  });
});

describe('FieldManager: the reset rule', () => {
  const setMF = (managedFields: unknown) => (l: KubeObject) => ({ ...l, metadata: { ...l.metadata, managedFields } });
  const created: Step = { update: () => ({ data: { a: '1' } }), by: 'creator' };
  it.each([
    { name: 'a list with one empty entry strips managedFields', steps: [created, { update: setMF([{}]), by: 'x' }], want: {} },
    { name: 'an empty list does not', steps: [created, { update: setMF([]), by: 'x' }], want: { 'creator/Update': { 'f:data': { '.': {}, 'f:a': {} } } } },
    {
      name: 'reset first, then the writer owns what it changed',
      steps: [created, { update: (l: KubeObject) => ({ ...setMF([{}])(l), data: { a: '1', b: '2' } }), by: 'x' }],
      want: { 'x/Update': data('b') },
    },
    { name: 'later writers own what they change', steps: [created, { update: setMF([{}]), by: 'x' }, { update: withData({ c: '3' }), by: 'y' }], want: { 'y/Update': data('c') } },
    {
      name: 'an apply after a reset gives the existing fields to before-first-apply',
      steps: [created, { update: setMF([{}]), by: 'x' }, { apply: { data: { z: '1' } }, by: 'A' }],
      want: { 'A/Apply': data('z'), 'before-first-apply/Update': { 'f:data': { '.': {}, 'f:a': {} } } },
    },
  ])('$name', ({ steps, want }) => {
    expect(owners(run(steps as Step[]))).toEqual(want);
  });
});

describe('FieldManager: apply details', () => {
  it('a no-op apply keeps the object and the entry time', () => {
    const first = run([{ apply: { data: { a: '1' } }, by: 'A', at: 0 }])!;
    const again = fm.apply(first, obj({ data: { a: '1' } }), { manager: 'A', now: time(30), force: false });
    expect(again).toEqual(first);
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
  });

  it.each([
    { name: 'managedFields in the configuration', config: { ...obj({}), metadata: { name: 'x', managedFields: [] } }, code: 400, message: 'metadata.managedFields must be nil' },
    { name: 'another version', config: { ...obj({}), apiVersion: 'v2' }, code: 400, message: 'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1' },
    {
      name: 'a list item without its key',
      config: obj({ items: [{ value: 'x' }] }),
      code: 400,
      message: 'failed to create typed patch object (v1, Kind=ConfigMap): .items: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    },
  ])('rejects $name', ({ config, code, message }) => {
    expect(() => fm.apply(undefined, config as KubeObject, { manager: 'A', now: time(), force: false })).toThrow(expect.objectContaining({ code, message }));
  });

  it('a live object the schema cannot describe is an internal error for apply and loses managedFields on update', () => {
    const live = { ...obj({ data: { a: '1' } }), items: [{ value: 'no key' }] } as KubeObject;
    expect(() => fm.apply(live, obj({ data: { b: '1' } }), { manager: 'A', now: time(), force: false })).toThrow(expect.objectContaining({ code: 500 }));
    expect(fm.update(undefined, live, { manager: 'A', now: time() })).toBeUndefined();
  });
});

describe('FieldManager: from client-side to server-side apply', () => {
  const LAST = 'kubectl.kubernetes.io/last-applied-configuration';
  const csa = (d: Record<string, string>) => ({ metadata: { annotations: { [LAST]: JSON.stringify(obj({ data: d })) } }, data: d });
  const created: Step = { update: () => csa({ a: '1', b: '1' }), by: 'kubectl-client-side-apply' };

  it('kubectl takes over the fields its last client-side apply still matches', () => {
    const got = run([created, { apply: { data: { a: '2', b: '1' } }, by: 'kubectl' }])!;
    expect(got.data).toEqual({ a: '2', b: '1' });
    expect(owners(got)).toEqual({
      'kubectl/Apply': data('a', 'b'),
      'kubectl-client-side-apply/Update': { 'f:data': { '.': {}, 'f:b': {} }, 'f:metadata': { 'f:annotations': { '.': {}, [`f:${LAST}`]: {} } } },
    });
    expect(JSON.parse(got.metadata.annotations![LAST])).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '2', b: '1' } });
  });

  it('fields changed since the last client-side apply still conflict', () => {
    const err = failure([created, { update: withData({ b: '9' }), by: 'editor' }, { apply: { data: { a: '2', b: '3' } }, by: 'kubectl' }]);
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "editor" using v1: .data.b');
  });

  it('other managers get no such pass', () => {
    expect(failure([created, { apply: { data: { a: '2' } }, by: 'other' }]).code).toBe(409);
  });
});

describe('field manager names', () => {
  it.each([
    { name: 'kubectl', ua: 'kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07', want: 'kubectl' },
    { name: 'no slash', ua: 'my tool', want: 'my tool' },
    { name: 'unprintable characters dropped', ua: 'a\u0007b/1', want: 'ab' },
    { name: 'none', ua: undefined, want: '' },
    { name: 'cut at 128 bytes', ua: 'x'.repeat(200), want: 'x'.repeat(128) },
  ])('from the User-Agent: $name', ({ ua, want }) => {
    expect(managerFromUserAgent(ua)).toBe(want);
  });

  it.each([
    { name: 'ok', manager: 'kubectl-client-side-apply', want: [] },
    { name: 'too long', manager: 'x'.repeat(129), want: [{ type: 'FieldValueTooLong', field: 'fieldManager', detail: 'may not be more than 128 bytes' }] },
    { name: 'unprintable', manager: 'a\nb', want: [{ type: 'FieldValueInvalid', field: 'fieldManager', detail: 'invalid character U+000A (at position 1)' }] },
  ])('validateFieldManager: $name', ({ manager, want }) => {
    expect(validateFieldManager(manager)).toEqual(want.map((w) => expect.objectContaining(w)));
  });
});
