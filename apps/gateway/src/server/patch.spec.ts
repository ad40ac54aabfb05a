import type { FastifyRequest } from 'fastify';
import type { ResourceDef } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import { applyConfiguration, patchFunction } from './patch';

const def = (group: string, kind: string): ResourceDef => ({
  group,
  version: 'v1',
  resource: `${kind.toLowerCase()}s`,
  kind,
  listKind: `${kind}List`,
  singular: kind.toLowerCase(),
  shortNames: [],
  scope: 'Namespaced',
  verbs: ['patch'],
  subresources: [],
  categories: [],
  enabledByDefault: true,
  virtual: false,
});
const POD = def('', 'Pod');
const WIDGET = def('example.com', 'Widget');

const request = (contentType: string, body: unknown) =>
  ({ headers: { 'content-type': contentType }, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) }) as unknown as FastifyRequest;

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
    const fn = patchFunction(request('application/strategic-merge-patch+json', { spec: { containers: [{ name: 'b', image: '2' }] } }), POD);
    expect((fn(pod).spec as { containers: unknown[] }).containers).toEqual([
      { name: 'a', image: '1' },
      { name: 'b', image: '2' },
    ]);
  });

  it.each([
    { name: 'strategic merge patch of a custom kind', d: WIDGET, type: 'application/strategic-merge-patch+json', accepted: 'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml' },
    { name: 'apply patches (not a function of the object)', d: POD, type: 'application/apply-patch+yaml', accepted: 'application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json' },
  ])('415 for $name', ({ d, type, accepted }) => {
    const err = error(() => patchFunction(request(type, {}), d));
    expect(err.code).toBe(415);
    expect(err.message).toBe(`the body of the request was in an unknown format - accepted media types include: ${accepted}`);
  });

  it('a strategic merge patch that removes metadata is a 400', () => {
    const fn = patchFunction(request('application/strategic-merge-patch+json', { metadata: null }), POD);
    expect(error(() => fn(pod)).code).toBe(400);
  });
});

describe('applyConfiguration', () => {
  it('reads YAML and JSON bodies', () => {
    expect(applyConfiguration(request('application/apply-patch+yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n'), POD, 'Strict', [])).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    expect(applyConfiguration(request('application/apply-patch+yaml', { apiVersion: 'v1', kind: 'Pod' }), POD, 'Strict', [])).toEqual({ apiVersion: 'v1', kind: 'Pod' });
  });

  it.each([
    { name: 'not an object', body: '[1]', message: 'the YAML body must decode to an object, got a list' },
    { name: 'no kind', body: { apiVersion: 'v1' }, message: `Object 'Kind' is missing in '{"apiVersion":"v1"}'` },
    { name: 'another kind', body: { apiVersion: 'v1', kind: 'Secret' }, message: 'the kind of the object (Secret) does not match the kind of the resource (Pod)' },
    { name: 'metadata not an object', body: { apiVersion: 'v1', kind: 'Pod', metadata: 'x' }, message: 'error decoding YAML: metadata must be an object' },
    { name: 'unknown fields under Strict', body: { apiVersion: 'v1', kind: 'Pod', bogus: 1 }, message: 'strict decoding error: unknown field "bogus"' },
  ])('400 for $name', ({ body, message }) => {
    const err = error(() => applyConfiguration(request('application/apply-patch+yaml', body), POD, 'Strict', []));
    expect(err.code).toBe(400);
    expect(err.message).toBe(message);
  });

  it('warns about unknown fields under Warn', () => {
    const warnings: string[] = [];
    applyConfiguration(request('application/apply-patch+yaml', { apiVersion: 'v1', kind: 'Pod', bogus: 1 }), POD, 'Warn', warnings);
    expect(warnings).toEqual(['unknown field "bogus"']);
  });
});
