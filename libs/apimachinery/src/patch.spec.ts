import { StatusError } from './errors';
import { MAX_JSON_PATCH_OPERATIONS, applyJsonPatch, applyMergePatch } from './patch';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

describe('applyMergePatch', () => {
  // RFC 7386 appendix A (object patches), plus upstream's pruning of nulls inside new values.
  it.each([
    { name: 'replace value', target: { a: 'b' }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'add key', target: { a: 'b' }, patch: { b: 'c' }, want: { a: 'b', b: 'c' } },
    { name: 'delete key', target: { a: 'b' }, patch: { a: null }, want: {} },
    { name: 'delete one of two', target: { a: 'b', b: 'c' }, patch: { a: null }, want: { b: 'c' } },
    { name: 'array replaced by scalar', target: { a: ['b'] }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'scalar replaced by array', target: { a: 'c' }, patch: { a: ['b'] }, want: { a: ['b'] } },
    { name: 'nested merge and delete', target: { a: { b: 'c' } }, patch: { a: { b: 'd', c: null } }, want: { a: { b: 'd' } } },
    { name: 'arrays are replaced whole', target: { a: [{ b: 'c' }] }, patch: { a: [1] }, want: { a: [1] } },
    { name: 'existing nulls stay', target: { e: null }, patch: { a: 1 }, want: { e: null, a: 1 } },
    { name: 'non-object target', target: [1, 2], patch: { a: 'b', c: null }, want: { a: 'b' } },
    { name: 'nulls pruned from new objects', target: {}, patch: { a: { bb: { ccc: null } } }, want: { a: { bb: {} } } },
    { name: 'nulls pruned inside new arrays (upstream)', target: {}, patch: { a: [{ b: null, c: 1 }, null] }, want: { a: [{ c: 1 }, null] } },
    { name: 'object replaces scalar', target: { a: 1 }, patch: { a: { b: 2, c: null } }, want: { a: { b: 2 } } },
    { name: 'empty patch', target: { a: { b: 1 } }, patch: {}, want: { a: { b: 1 } } },
  ])('$name', ({ target, patch, want }) => {
    const before = JSON.stringify({ target, patch });
    expect(applyMergePatch(target, patch)).toEqual(want);
    expect(JSON.stringify({ target, patch })).toBe(before);
  });

  it.each([
    { name: 'array', patch: ['c'] },
    { name: 'null', patch: null },
    { name: 'string', patch: 'bar' },
  ])('rejects a $name patch with 400', ({ patch }) => {
    const err = statusOf(() => applyMergePatch({ a: 1 }, patch));
    expect({ code: err.code, message: err.message }).toEqual({ code: 400, message: 'Invalid JSON Patch' });
  });

  it('returns a copy that shares nothing with the target', () => {
    const target = { metadata: { name: 'a', labels: { x: '1' } }, spec: { replicas: 1 } };
    const out = applyMergePatch(target, { spec: { replicas: 3 } }) as typeof target;
    out.metadata.labels.x = 'changed';
    expect(target.metadata.labels.x).toBe('1');
  });

  it('keeps __proto__ keys as data', () => {
    const out = applyMergePatch({}, JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":{"x":1}}}')) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect((Object.getPrototypeOf(out) as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"a":{"__proto__":{"x":1}}}');
  });
});

describe('applyJsonPatch', () => {
  const pod = { metadata: { name: 'p', labels: { a: '1' } }, spec: { replicas: 1, containers: [{ name: 'c' }] } };

  it.each([
    { name: 'add', ops: [{ op: 'add', path: '/metadata/labels/b', value: '2' }], want: { ...pod, metadata: { name: 'p', labels: { a: '1', b: '2' } } } },
    { name: 'replace', ops: [{ op: 'replace', path: '/spec/replicas', value: 3 }], want: { ...pod, spec: { ...pod.spec, replicas: 3 } } },
    { name: 'remove', ops: [{ op: 'remove', path: '/metadata/labels/a' }], want: { ...pod, metadata: { name: 'p', labels: {} } } },
    { name: 'append to list', ops: [{ op: 'add', path: '/spec/containers/-', value: { name: 'd' } }], want: { ...pod, spec: { ...pod.spec, containers: [{ name: 'c' }, { name: 'd' }] } } },
    {
      name: 'test then replace',
      ops: [
        { op: 'test', path: '/spec/replicas', value: 1 },
        { op: 'replace', path: '/spec/replicas', value: 2 },
      ],
      want: { ...pod, spec: { ...pod.spec, replicas: 2 } },
    },
    { name: 'copy', ops: [{ op: 'copy', from: '/metadata/name', path: '/metadata/labels/name' }], want: { ...pod, metadata: { name: 'p', labels: { a: '1', name: 'p' } } } },
    { name: 'move', ops: [{ op: 'move', from: '/metadata/labels/a', path: '/metadata/labels/z' }], want: { ...pod, metadata: { name: 'p', labels: { z: '1' } } } },
    { name: 'escaped path', ops: [{ op: 'add', path: '/metadata/labels/app.orch.io~1name', value: 'w' }], want: { ...pod, metadata: { name: 'p', labels: { a: '1', 'app.orch.io/name': 'w' } } } },
    { name: 'null document is no operation', ops: null, want: pod },
    { name: 'empty list', ops: [], want: pod },
  ])('$name', ({ ops, want }) => {
    const before = JSON.stringify({ pod, ops });
    const out = applyJsonPatch(pod, ops);
    expect(out).toEqual(want);
    expect(JSON.stringify({ pod, ops })).toBe(before);
  });

  it('does not share added values with the patch', () => {
    const value = { k: 'v' };
    const out = applyJsonPatch({}, [{ op: 'add', path: '/x', value }]) as { x: { k: string } };
    out.x.k = 'changed';
    expect(value.k).toBe('v');
  });

  it.each([
    { name: 'failed test', ops: [{ op: 'test', path: '/spec/replicas', value: 5 }], cause: 'operation 0: Test operation failed' },
    { name: 'remove missing key', ops: [{ op: 'remove', path: '/spec/missing' }], cause: 'operation 0: Cannot perform the operation at a path that does not exist' },
    { name: 'replace missing key', ops: [{ op: 'replace', path: '/nope', value: 1 }], cause: 'operation 0: Cannot perform the operation at a path that does not exist' },
    { name: 'unknown op', ops: [{ op: 'frobnicate', path: '/a' }], cause: 'operation 0: Operation `op` property is not one of operations defined in RFC-6902' },
    { name: 'second op fails', ops: [{ op: 'add', path: '/x', value: 1 }, { op: 'test', path: '/x', value: 2 }], cause: 'operation 1: Test operation failed' },
    { name: 'prototype write', ops: [{ op: 'add', path: '/__proto__/polluted', value: 1 }], cause: expect.stringContaining('JSON-Patch: modifying `__proto__`') },
  ])('rejects $name with 422', ({ ops, cause }) => {
    const err = statusOf(() => applyJsonPatch(pod, ops));
    expect(err.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      code: 422,
      details: { causes: [{ message: cause }] },
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    { name: 'object document', ops: { op: 'add' }, code: 400, message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch' },
    { name: 'string document', ops: 'x', code: 400, message: 'json: cannot unmarshal string into Go value of type jsonpatch.Patch' },
    { name: 'non-object operation', ops: [{ op: 'test', path: '/a', value: 1 }, 7], code: 400, message: 'json: cannot unmarshal number into Go value of type jsonpatch.Operation' },
    {
      name: 'too many operations',
      ops: Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: 'test', path: '/spec/replicas', value: 1 })),
      code: 413,
      message: 'The allowed maximum operations in a JSON patch is 10000, got 10001',
    },
  ])('rejects a malformed document: $name', ({ ops, code, message }) => {
    const err = statusOf(() => applyJsonPatch(pod, ops));
    expect({ code: err.code, message: err.message }).toEqual({ code, message });
  });
});
