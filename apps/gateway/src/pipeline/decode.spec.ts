import type { GroupVersionKind } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { decodeApplyConfiguration, decodeDeleteOptions, decodeObject, decodePatch } from './decode';

const POD: GroupVersionKind = { group: '', version: 'v1', kind: 'Pod' };
const WIDGET: GroupVersionKind = { group: 'example.com', version: 'v1', kind: 'Widget' };

const bytes = (body: unknown) => Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
const patchFunction = (type: string, body: unknown, kind: GroupVersionKind) => decodePatch(bytes(body), type, kind);
const applyConfiguration = (body: unknown, kind: GroupVersionKind, directive: 'Strict' | 'Warn', warnings: string[]) => decodeApplyConfiguration(bytes(body), kind, directive, warnings);

function error(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a StatusError');
}

describe('patchFunction', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '1' }] } } as KubeObject;

  it('applies strategic merge patches with the kind’s merge keys', () => {
    const fn = patchFunction('application/strategic-merge-patch+json', { spec: { containers: [{ name: 'b', image: '2' }] } }, POD);
    expect((fn(pod).spec as { containers: unknown[] }).containers).toEqual([
      { name: 'a', image: '1' },
      { name: 'b', image: '2' },
    ]);
  });

  it.each([
    { name: 'strategic merge patch of a custom kind', d: WIDGET, type: 'application/strategic-merge-patch+json', accepted: 'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml' },
    { name: 'apply patches (not a function of the object)', d: POD, type: 'application/apply-patch+yaml', accepted: 'application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json' },
  ])('415 for $name', ({ d, type, accepted }) => {
    const err = error(() => patchFunction(type, {}, d));
    expect(err.code).toBe(415);
    expect(err.message).toBe(`the body of the request was in an unknown format - accepted media types include: ${accepted}`);
  });

  it('a strategic merge patch that removes metadata is a 400', () => {
    const fn = patchFunction('application/strategic-merge-patch+json', { metadata: null }, POD);
    expect(error(() => fn(pod)).code).toBe(400);
  });
});

describe('applyConfiguration', () => {
  it('reads YAML and JSON bodies', () => {
    expect(applyConfiguration('apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n', POD, 'Strict', [])).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    expect(applyConfiguration({ apiVersion: 'v1', kind: 'Pod' }, POD, 'Strict', [])).toEqual({ apiVersion: 'v1', kind: 'Pod' });
  });

  it.each([
    { name: 'not an object', body: '[1]', message: 'the YAML body must decode to an object, got a list' },
    { name: 'no kind', body: { apiVersion: 'v1' }, message: `Object 'Kind' is missing in '{"apiVersion":"v1"}'` },
    { name: 'another kind', body: { apiVersion: 'v1', kind: 'Secret' }, message: 'the kind of the object (Secret) does not match the kind of the resource (Pod)' },
    { name: 'metadata not an object', body: { apiVersion: 'v1', kind: 'Pod', metadata: 'x' }, message: 'error decoding YAML: metadata must be an object' },
    { name: 'unknown fields under Strict', body: { apiVersion: 'v1', kind: 'Pod', bogus: 1 }, message: 'strict decoding error: unknown field "bogus"' },
  ])('400 for $name', ({ body, message }) => {
    const err = error(() => applyConfiguration(body, POD, 'Strict', []));
    expect(err.code).toBe(400);
    expect(err.message).toBe(message);
  });

  it('warns about unknown fields under Warn', () => {
    const warnings: string[] = [];
    applyConfiguration({ apiVersion: 'v1', kind: 'Pod', bogus: 1 }, POD, 'Warn', warnings);
    expect(warnings).toEqual(['unknown field "bogus"']);
  });
});

describe('decodeObject: one decoder for every object body', () => {
  const SCALE: GroupVersionKind = { group: 'autoscaling', version: 'v1', kind: 'Scale' };
  const EVICTION: GroupVersionKind = { group: 'policy', version: 'v1', kind: 'Eviction' };
  const SSAR: GroupVersionKind = { group: 'authorization.orch.io', version: 'v1', kind: 'SelfSubjectAccessReview' };

  it.each([
    { name: 'a pod', kind: POD, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } },
    { name: 'type fields left out are filled in', kind: SCALE, body: { spec: { replicas: 2 } } },
    { name: 'an eviction', kind: EVICTION, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p' } } },
    { name: 'a review at its k8s.io spelling', kind: SSAR, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: {} } },
    { name: 'YAML', kind: POD, body: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n', type: 'application/yaml' },
  ])('accepts $name', ({ kind, body, type }) => {
    const obj = decodeObject(bytes(body), type ?? 'application/json', kind, 'Strict', []);
    expect(obj.kind).toBe(kind.kind);
  });

  it.each([
    { name: 'a list', kind: POD, body: [1], message: 'the body of the request must be a Pod object' },
    { name: 'another kind', kind: POD, body: { kind: 'Secret' }, message: 'the kind in the data (Secret) does not match the expected kind (Pod)' },
    { name: 'another group', kind: EVICTION, body: { apiVersion: 'apps/v1', kind: 'Eviction' }, message: 'the API version in the data (apps/v1) does not match the expected API version (policy/v1)' },
    { name: 'a wrong field type in a subresource body', kind: SCALE, body: { spec: { replicas: 'many' } }, message: expect.stringContaining('Scale in version "v1" cannot be handled as a Scale') },
    { name: 'an unknown field under Strict', kind: EVICTION, body: { kind: 'Eviction', bogus: 1 }, message: 'strict decoding error: unknown field "bogus"' },
    { name: 'a duplicate field under Strict', kind: SSAR, body: '{"kind":"SelfSubjectAccessReview","spec":{},"spec":{}}', message: 'strict decoding error: duplicate field "spec"' },
    { name: 'metadata of the wrong type', kind: POD, body: { metadata: [] }, message: 'json: cannot unmarshal array into Go struct field Pod.metadata of type v1.ObjectMeta' },
  ])('400 for $name', ({ kind, body, message }) => {
    const err = error(() => decodeObject(bytes(body), 'application/json', kind, 'Strict', []));
    expect(err.code).toBe(400);
    expect(err.message).toEqual(message);
  });

  it('Warn turns unknown fields of a subresource body into warnings', () => {
    const warnings: string[] = [];
    decodeObject(bytes({ kind: 'Scale', spec: { replicas: 1, extra: true } }), undefined, SCALE, 'Warn', warnings);
    expect(warnings).toEqual(['unknown field "spec.extra"']);
  });

  it('415 for a media type nobody serves', () => {
    expect(error(() => decodeObject(bytes({}), 'text/html', POD, 'Strict', [])).code).toBe(415);
  });
});

describe('decodeDeleteOptions', () => {
  it.each([
    { name: 'no body', body: undefined, query: '', want: {} },
    { name: 'a body', body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' }, query: '', want: { propagationPolicy: 'Background' } },
    { name: 'query parameters win', body: { gracePeriodSeconds: 30 }, query: 'gracePeriodSeconds=0&propagationPolicy=Orphan', want: { gracePeriodSeconds: 0, propagationPolicy: 'Orphan' } },
  ])('$name', ({ body, query, want }) => {
    expect(decodeDeleteOptions(body === undefined ? undefined : bytes(body), 'application/json', new URLSearchParams(query))).toEqual(want);
  });

  it.each([
    { name: 'another kind', body: { kind: 'Pod' }, query: '', code: 400 },
    { name: 'a wrong field type', body: { gracePeriodSeconds: 'soon' }, query: '', code: 400 },
    { name: 'a bad gracePeriodSeconds', body: undefined, query: 'gracePeriodSeconds=x', code: 400 },
  ])('400 for $name', ({ body, query, code }) => {
    expect(error(() => decodeDeleteOptions(body === undefined ? undefined : bytes(body), 'application/json', new URLSearchParams(query), 'Strict')).code).toBe(code);
  });
});
