import fc from 'fast-check';
import { Catalog, encodeProtobuf, type GroupVersionKind, type ResourceDef } from '@orch/api';
import { stringify as toYaml } from 'yaml';
import { hostileValueArb, mutate, mutationArb, nameArb, objectArb, shallowMutationArb, toJsonText, type Json } from './objects';

/** One request the fuzz suite sends (with admin credentials). */
export interface FuzzRequest {
  method: string;
  /** Path and query string. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** A stream (watch, log follow): judged by its status line, then closed. */
  streaming: boolean;
  /** The request's shape, e.g. `PUT pods/status (object, mutated)`: what a regression test is named after. */
  shape: string;
  /**
   * What a refusal must leave unchanged: the object the path names (a create: the one its body
   * names), or the collection a deletecollection empties. Undefined when it cannot be named.
   */
  touches?: { item: string } | { collection: string };
}

/** The namespace the suite works in, with a `seed` object of each SEEDED kind. */
export const FUZZ_NAMESPACE = 'fuzz';
/** Objects named `seed` exist for these (resource, body) pairs before the run (see fuzz spec). */
export const SEEDED = ['configmaps', 'secrets', 'pods', 'services', 'serviceaccounts', 'roles', 'rolebindings', 'jobs', 'deployments', 'nodes', 'leases', 'namespaces'];

/**
 * Resources whose objects change how later requests are served (webhooks and policies call
 * out or refuse, API services proxy): never written by the fuzzer, only read.
 */
const READ_ONLY_GROUPS = ['admissionregistration.orch.io', 'apiregistration.orch.io'];
/** Namespaces the fuzzer must not delete or replace (the run would lose its footing). */
const PROTECTED_NAMESPACES = ['fuzz', 'default', 'orch-system', 'orch-public', 'kube-system'];

export const RESOURCES: ResourceDef[] = new Catalog().resources().filter((d) => d.enabledByDefault);

/** Path segments clients do not expect: encoded slashes and dots, NUL, unicode, long. */
const hostileSegmentArb = fc.oneof(
  fc.constantFrom('%2F', 'a%2Fb', '..', '%2e%2e', '.', '%00', 'a%00b', '%ZZ', '%', 'é', '%C3%A9', '🦀', '%F0%9F%A6%80', 'UPPER', 'a b', 'a%20b', '-x', 'x-', 'a.b', '~', '%7E'),
  fc.integer({ min: 64, max: 300 }).map((n) => 'a'.repeat(n)),
  fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)),
);
const nameSegmentArb = fc.oneof({ weight: 4, arbitrary: fc.constant('seed') }, { weight: 3, arbitrary: nameArb }, { weight: 2, arbitrary: hostileSegmentArb });
const namespaceArb = fc.oneof({ weight: 6, arbitrary: fc.constant(FUZZ_NAMESPACE) }, { weight: 1, arbitrary: fc.constant('default') }, { weight: 1, arbitrary: nameArb }, { weight: 1, arbitrary: hostileSegmentArb });

/** Every SPEC query parameter with valid and invalid values. */
const QUERY_VALUES: Record<string, fc.Arbitrary<string>> = {
  limit: fc.oneof(fc.constantFrom('0', '1', '2', '500', '-1', '1.5', '1e3', 'ten', '', '99999999999999999999', '9223372036854775807', '9223372036854775808', '0x10', ' 1'), fc.nat().map(String)),
  continue: fc.oneof(fc.constantFrom('', 'garbage', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0', '%00'), fc.base64String({ maxLength: 64 })),
  resourceVersion: fc.oneof(fc.constantFrom('0', '1', '', 'abc', '-1', '99999999999999999999', '1.0', '00'), fc.nat().map(String)),
  resourceVersionMatch: fc.constantFrom('Exact', 'NotOlderThan', '', 'Sometimes'),
  labelSelector: fc.oneof(fc.constantFrom('a=b', 'a in (b,c)', 'a in (', '!a', 'a!=', '=', 'a,b', '-bad=1', 'a==b', 'a notin ()', 'x'.repeat(10_000)), fc.string({ maxLength: 30 })),
  fieldSelector: fc.oneof(fc.constantFrom('metadata.name=seed', 'metadata.namespace!=x', 'spec.nodeName=', 'status.phase=Running', 'spec.foo=x', 'novalue', '=', 'metadata.name=a,metadata.name=b', 'y'.repeat(10_000)), fc.string({ maxLength: 30 })),
  watch: fc.constantFrom('1', 'true', 'false', '0', 'yes', ''),
  allowWatchBookmarks: fc.constantFrom('true', 'false', 'maybe'),
  sendInitialEvents: fc.constantFrom('true', 'false', 'x'),
  timeoutSeconds: fc.constantFrom('1', '0', '-1', 'x', '99999999999999999999', '1.5'),
  dryRun: fc.constantFrom('All', '', 'Some', 'all'),
  fieldManager: fc.oneof(fc.constantFrom('fuzz', '', 'kubectl-client-side-apply', 'm'.repeat(200), 'a\u0000b', '\u00e9'), fc.string({ maxLength: 10 })),
  fieldValidation: fc.constantFrom('Strict', 'Warn', 'Ignore', 'strict', '', 'Loud'),
  force: fc.constantFrom('true', 'false', 'x'),
  pretty: fc.constantFrom('true', 'false', '1', ''),
  propagationPolicy: fc.constantFrom('Foreground', 'Background', 'Orphan', 'Sideways', ''),
  gracePeriodSeconds: fc.constantFrom('0', '30', '-1', 'x', '99999999999999999999', '1.5'),
  orphanDependents: fc.constantFrom('true', 'false', 'x'),
  includeObject: fc.constantFrom('None', 'Metadata', 'Object', 'All'),
  container: fc.constantFrom('c', 'nope', ''),
  follow: fc.constantFrom('false', 'true', 'x'),
  previous: fc.constantFrom('true', 'false'),
  tailLines: fc.constantFrom('1', '-1', 'x', '99999999999999999999'),
  sinceSeconds: fc.constantFrom('1', '0', '-5', 'x'),
  sinceTime: fc.constantFrom('2024-01-01T00:00:00Z', 'yesterday'),
  limitBytes: fc.constantFrom('1', '0', '-1', 'x'),
  timestamps: fc.constantFrom('true', 'x'),
  command: fc.constantFrom('true', 'sh'),
  stdout: fc.constantFrom('true', '1'),
  ports: fc.constantFrom('80', 'x', '99999'),
};
/** Query parameters with values a correct client sends, by verb kind. */
const SANE_QUERY: Record<'read' | 'write' | 'delete', Record<string, string[]>> = {
  read: { limit: ['1', '2', '500'], labelSelector: ['app=seed', 'a in (b,c)', '!a'], fieldSelector: ['metadata.name=seed', 'metadata.namespace!=x'], resourceVersion: ['0'], pretty: ['true'], includeObject: ['Object'] },
  write: { dryRun: ['All'], fieldManager: ['fuzz'], fieldValidation: ['Strict', 'Warn', 'Ignore'], pretty: ['true'] },
  delete: { propagationPolicy: ['Foreground', 'Background', 'Orphan'], gracePeriodSeconds: ['0', '30'], dryRun: ['All'] },
};
function saneQueryArb(method: string): fc.Arbitrary<[string, string][]> {
  const table = SANE_QUERY[method === 'GET' ? 'read' : method === 'DELETE' ? 'delete' : 'write'];
  return fc.subarray(Object.keys(table), { maxLength: 2 }).chain((keys) => (keys.length ? fc.tuple(...keys.map((k) => fc.constantFrom(...table[k]).map((v) => [k, v] as [string, string]))) : fc.constant([] as [string, string][])));
}
const queryArb: fc.Arbitrary<[string, string][]> = fc.array(fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...Object.keys(QUERY_VALUES)) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), { maxLength: 4 }).chain((keys) =>
  keys.length === 0 ? fc.constant([] as [string, string][]) : fc.tuple(...keys.map((k) => (Object.hasOwn(QUERY_VALUES, k) ? QUERY_VALUES[k] : fc.string({ maxLength: 8 })).map((v) => [k, v] as [string, string]))),
);

const ACCEPTS = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/vnd.kubernetes.protobuf, application/json',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  'application/json;stream=watch',
  '*/*',
  'text/html',
  'application/*;q=0.5, text/plain;q=1',
  ';;;',
  '',
];
const CONTENT_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', ';', 'application/json;;', ''];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

const saneHeadersArb = fc.record({ accept: fc.constantFrom('application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf, application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json', '*/*') }, { requiredKeys: [] });
const extraHeadersArb = fc.record(
  {
    accept: fc.constantFrom(...ACCEPTS),
    'accept-encoding': fc.constantFrom('gzip', 'deflate', 'gzip;q=0', 'x'),
    'if-match': fc.constantFrom('"1"', '*', 'W/"5"', '1,2', 'garbage', ''),
    'user-agent': fc.constantFrom('kubectl/v1.32.0 (linux/amd64) kubernetes/abc', '', '\u00e9', 'x'.repeat(1000)),
    'impersonate-user': fc.constantFrom('alice', 'system:admin', ''),
    'impersonate-group': fc.constantFrom('system:masters', 'devs'),
  },
  { requiredKeys: [] },
);

/** JSON patch operations, well-formed or not. */
const jsonPatchArb: fc.Arbitrary<Json> = fc.array(
  fc.record(
    {
      op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', ''),
      path: fc.oneof(fc.constantFrom('/metadata/labels/a', '/metadata/labels', '/spec', '/spec/replicas', '/metadata/name', '/metadata/resourceVersion', '/status', '/data/x', '', '/', '/~1', '/a/b/c', '/metadata/labels/-', '/spec/containers/0', '/spec/containers/-'), fc.string({ maxLength: 10 })),
      from: fc.constantFrom('/metadata/labels', '/spec', '/nope'),
      value: hostileValueArb,
    },
    { requiredKeys: ['op'] },
  ),
  { maxLength: 4 },
) as fc.Arbitrary<Json>;

/** YAML that no well-behaved client sends: alias bombs, tags, several documents, bad indentation. */
const hostileYamlArb = fc.constantFrom(
  'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n',
  'apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: Secret\n',
  '!!binary aGVsbG8=',
  '!!python/object:os.system [ls]',
  'a: b\n  c: d\n\t- e',
  '? [a, b]\n: c',
  'x: *undefined',
  '{'.repeat(5000),
  '- '.repeat(5000),
);

/** The protobuf form of an object (its JSON when the kind has none, so the body still says something). */
function protobufOrJson(o: Json): Buffer {
  try {
    return encodeProtobuf(o as object);
  } catch {
    return Buffer.from(toJsonText(o));
  }
}

/** A protobuf envelope (`k8s\0` + Unknown) of a valid object, with some bytes changed. */
function protobufArb(object: fc.Arbitrary<Json>): fc.Arbitrary<Buffer> {
  return fc.tuple(object, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }), fc.option(fc.nat(), { nil: undefined })).map(([o, flips, cut]) => {
    let bytes: Buffer;
    try {
      bytes = encodeProtobuf(o as object);
    } catch {
      bytes = Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x02, 0x08, 0x01]);
    }
    const b = Buffer.from(bytes);
    for (const [at, value] of flips) if (b.length > 4) b[4 + (at % (b.length - 4))] = value;
    return cut === undefined ? b : b.subarray(0, Math.max(4, cut % (b.length + 1)));
  });
}

interface Target {
  def: ResourceDef;
  namespace?: string;
  name?: string;
  sub?: string;
}

/** The URL path of a target (namespaced resources under their namespace). */
function targetPath(t: Target): string {
  return `${collectionPath(t)}${t.name !== undefined ? `/${t.name}` : ''}${t.sub ? `/${t.sub}` : ''}`;
}

function collectionPath(t: Target): string {
  const base = t.def.group ? `/apis/${t.def.group}/${t.def.version}` : `/api/${t.def.version}`;
  const ns = t.def.scope === 'Namespaced' && t.namespace !== undefined ? `/namespaces/${t.namespace}` : '';
  return `${base}${ns}/${t.def.resource}`;
}

const PLAIN = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

/** What a refusal of this request must leave as it was (see FuzzRequest.touches). */
function touches(t: Target, method: string, body: Buffer | undefined): FuzzRequest['touches'] {
  if (t.def.virtual || (t.namespace !== undefined && !PLAIN.test(t.namespace))) return undefined;
  if (t.name !== undefined) return PLAIN.test(t.name) ? { item: `${collectionPath(t)}/${t.name}` } : undefined;
  if (method === 'DELETE') return { collection: collectionPath(t) };
  if (method !== 'POST' || !body) return undefined;
  try {
    const name = (JSON.parse(body.toString('utf8')) as { metadata?: { name?: unknown } })?.metadata?.name;
    return typeof name === 'string' && PLAIN.test(name) ? { item: `${collectionPath(t)}/${name}` } : undefined;
  } catch {
    return undefined;
  }
}

/** A target a correct client names: the fuzz namespace, the seed object or a valid name, a subresource the resource has. */
const saneTargetArb: fc.Arbitrary<Target> = fc.constantFrom(...RESOURCES).chain((def) => {
  const subs = def.subresources.map((s) => s.name).filter((s) => !['log', 'proxy', 'exec', 'attach', 'portforward'].includes(s));
  return fc.record({
    def: fc.constant(def),
    namespace: fc.constant(FUZZ_NAMESPACE),
    name: fc.oneof(fc.constant('seed'), nameArb, fc.constant(undefined)),
    sub: subs.length ? fc.option(fc.constantFrom(...subs), { nil: undefined, freq: 3 }) : fc.constant(undefined),
  }).map((t) => (t.name === undefined ? { ...t, sub: undefined } : t));
});

const targetArb: fc.Arbitrary<Target> = fc.constantFrom(...RESOURCES).chain((def) => {
  const subs = def.subresources.map((s) => s.name);
  const sub = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: subs.length ? 2 : 0, arbitrary: subs.length ? fc.constantFrom(...subs) : fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('status', 'scale', 'bogus', 'binding', 'eviction', 'log', 'proxy') });
  return fc.record({
    def: fc.constant(def),
    namespace: fc.oneof({ weight: 9, arbitrary: namespaceArb }, { weight: 1, arbitrary: fc.constant(undefined) }),
    name: fc.oneof({ weight: 3, arbitrary: nameSegmentArb }, { weight: 1, arbitrary: fc.constant(undefined) }),
    sub,
  }).map((t) => (t.name === undefined ? { ...t, sub: undefined } : t));
});

/** The kind a body for this target has (the subresource's when it names one). */
function bodyKind(t: Target): GroupVersionKind {
  const sub = t.sub ? t.def.subresources.find((s) => s.name === t.sub) : undefined;
  return sub ? { group: sub.group ?? t.def.group, version: sub.version ?? t.def.version, kind: sub.kind } : { group: t.def.group, version: t.def.version, kind: t.def.kind };
}

type Body = { bytes: Buffer; contentType: string; kind: string };

const asBody = (kind: string, contentType: string) => (bytes: Buffer | string) => ({ bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes), contentType, kind });

/** A body for writing an object of this target: the object as is or mutated, in JSON, YAML or protobuf; or garbage. */
function objectBodyArb(t: Target, sane = false): fc.Arbitrary<Body> {
  const kind = bodyKind(t);
  const name = t.name && /^[a-z0-9.-]+$/.test(t.name) ? fc.constant(t.name) : nameArb;
  const ns = t.def.scope === 'Namespaced' ? t.namespace : undefined;
  const object = objectArb(kind, name, ns && /^[a-z0-9-]+$/.test(ns) ? ns : undefined);
  const mutated = fc.tuple(object, fc.array(mutationArb, { minLength: 1, maxLength: 3 })).map(([o, ms]) => mutate(o, ms));
  if (sane) {
    const lightly = fc.tuple(object, fc.array(shallowMutationArb, { maxLength: 1 })).map(([o, ms]) => mutate(o, ms));
    return fc.oneof(
      { weight: 4, arbitrary: lightly.map((o) => toJsonText(o)).map(asBody('object', 'application/json')) },
      { weight: 1, arbitrary: object.map((o) => toYaml(o)).map(asBody('object as YAML', 'application/yaml')) },
      { weight: 1, arbitrary: object.map((o) => asBody('object as protobuf', 'application/vnd.kubernetes.protobuf')(protobufOrJson(o))) },
    );
  }
  return fc.oneof(
    { weight: 3, arbitrary: object.map((o) => toJsonText(o)).map(asBody('object', 'application/json')) },
    { weight: 6, arbitrary: mutated.map((o) => toJsonText(o)).map(asBody('object, mutated', 'application/json')) },
    { weight: 1, arbitrary: object.map((o) => toYaml(o)).map(asBody('object as YAML', 'application/yaml')) },
    { weight: 2, arbitrary: protobufArb(object).map(asBody('protobuf, mutated', 'application/vnd.kubernetes.protobuf')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)).map(asBody('raw bytes', 'application/json')) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)).map(asBody('JSON value', 'application/json')) },
    { weight: 1, arbitrary: hostileYamlArb.map(asBody('hostile YAML', 'application/yaml')) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '{"a":1,"a":2}', 'null', '[]', '"x"', '1e999', '{"metadata":{"name":"x"}}x').map(asBody('malformed JSON', 'application/json')) },
  );
}

/** A PATCH body: JSON patch, merge or strategic merge patch, or an apply configuration, sane or not. */
function patchBodyArb(t: Target): fc.Arbitrary<Body> {
  const kind = bodyKind(t);
  const base = objectArb(kind, fc.constant(t.name ?? 'seed'), undefined);
  const partial = fc.tuple(base, fc.array(mutationArb, { maxLength: 2 })).map(([o, ms]) => mutate(o, ms));
  const shallow = fc.tuple(base, fc.array(shallowMutationArb, { maxLength: 2 })).map(([o, ms]) => mutate(o, ms));
  return fc.oneof(
    jsonPatchArb.map((p) => toJsonText(p)).map(asBody('json patch', PATCH_TYPES[0])),
    partial.map((p) => toJsonText(p)).map(asBody('merge patch', PATCH_TYPES[1])),
    fc.tuple(partial, fc.constantFrom('replace', 'delete', 'merge', 'bogus')).map(([p, directive]) => toJsonText({ ...(p as object), $patch: directive } as Json)).map(asBody('strategic merge patch', PATCH_TYPES[2])),
    shallow.map((p) => toYaml(p)).map(asBody('apply', PATCH_TYPES[3])),
    hostileYamlArb.map(asBody('apply, hostile YAML', PATCH_TYPES[3])),
    fc.tuple(fc.constantFrom(...PATCH_TYPES), fc.uint8Array({ maxLength: 32 })).map(([ct, b]) => asBody('patch, raw bytes', ct)(Buffer.from(b))),
  );
}

const deleteOptionsArb: fc.Arbitrary<Body> = fc.oneof(
  fc.record({ kind: fc.constantFrom('DeleteOptions', 'Pod', ''), apiVersion: fc.constantFrom('v1', 'meta.k8s.io/v1', 'x'), gracePeriodSeconds: hostileValueArb, propagationPolicy: hostileValueArb, preconditions: fc.record({ uid: hostileValueArb, resourceVersion: hostileValueArb }, { requiredKeys: [] }), dryRun: hostileValueArb }, { requiredKeys: [] }).map((o) => toJsonText(o as Json)).map(asBody('delete options', 'application/json')),
  fc.uint8Array({ maxLength: 16 }).map((b) => asBody('delete options, raw bytes', 'application/json')(Buffer.from(b))),
);

/** Methods by path shape (collection, item, subresource); a few odd ones anywhere. */
function methodArb(t: Target): fc.Arbitrary<string> {
  const common = t.name === undefined ? ['GET', 'GET', 'POST', 'POST', 'DELETE'] : t.sub ? ['GET', 'PUT', 'PUT', 'PATCH', 'POST', 'POST'] : ['GET', 'PUT', 'PUT', 'PATCH', 'PATCH', 'DELETE', 'POST'];
  return fc.oneof({ weight: 19, arbitrary: fc.constantFrom(...common) }, { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'TRACE', 'FOO', 'PROPFIND') });
}

const isProtected = (t: Target, method: string) =>
  method !== 'GET' &&
  (READ_ONLY_GROUPS.includes(t.def.group) || (t.def.resource === 'namespaces' && (t.name === undefined ? method === 'DELETE' : PROTECTED_NAMESPACES.includes(t.name))));

/**
 * Any request of the fuzz suite: a catalog path shape, a method, query parameters, headers and
 * a body. Sane requests (what a correct client sends, reaching validation and storage) and
 * hostile ones (anything) come in about equal numbers.
 */
export const requestArb: fc.Arbitrary<FuzzRequest> = fc.oneof({ weight: 1, arbitrary: requests(true) }, { weight: 1, arbitrary: requests(false) });

function requests(sane: boolean): fc.Arbitrary<FuzzRequest> {
  return (sane ? saneTargetArb : targetArb).chain((t) =>
  (sane ? fc.constantFrom(...(t.name === undefined ? ['GET', 'POST', 'POST'] : t.sub ? ['GET', 'PUT', 'PATCH'] : ['GET', 'PUT', 'PATCH', 'PATCH', 'DELETE'])) : methodArb(t)).chain((method) => {
    const bodyArb: fc.Arbitrary<Body | undefined> =
      method === 'POST' || method === 'PUT'
        ? objectBodyArb(t, sane)
        : method === 'PATCH'
          ? patchBodyArb(t)
          : method === 'DELETE'
            ? fc.option(deleteOptionsArb, { nil: undefined, freq: 2 })
            : fc.option(objectBodyArb(t), { nil: undefined, freq: 8 });
    return fc.record({
      query: sane ? saneQueryArb(method) : queryArb,
      headers: sane ? saneHeadersArb : extraHeadersArb,
      body: bodyArb,
      contentType: sane ? fc.constant(undefined) : fc.option(fc.constantFrom(...CONTENT_TYPES, ...PATCH_TYPES), { nil: undefined, freq: 8 }),
      extraSlash: sane ? fc.constant('') : fc.constantFrom('', '', '', '', '', '', '/', '//x'),
    }).map(({ query, headers, body, contentType, extraSlash }) => {
      const protectedTarget = isProtected(t, method);
      const m = protectedTarget ? 'GET' : method;
      const params = new URLSearchParams(query);
      // upstream reads any watch value but 0/f/false as a watch, and `watch=` as one too.
      const watch = params.has('watch') && !['0', 'f', 'F', 'false', 'False', 'FALSE'].includes(params.get('watch')!);
      const streaming = m === 'GET' && (watch || params.get('follow') === 'true' || t.sub === 'log' || t.sub === 'proxy');
      const h: Record<string, string> = { ...headers };
      if (body && m !== 'GET') h['content-type'] = contentType ?? body.contentType;
      const qs = params.toString();
      const sub = t.sub ? `${t.def.resource}/${t.sub}` : t.def.resource;
      return {
        method: m,
        path: `${targetPath(t)}${extraSlash}${qs ? `?${qs}` : ''}`,
        headers: h,
        body: m === 'GET' ? undefined : body?.bytes,
        streaming,
        shape: `${m} ${sub}${t.name === undefined ? '' : ' (item)'}${body && m !== 'GET' ? ` (${body.kind})` : ''}`,
        touches: touches(t, m, m === 'GET' ? undefined : body?.bytes),
      };
    });
  }),
  );
}
