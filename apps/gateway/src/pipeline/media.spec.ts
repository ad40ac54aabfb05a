import { PROTOBUF_MAGIC, encodeProtobuf } from '@orch/api';
import { StatusError } from '@orch/apimachinery';
import { decodeMedia } from './media';
import { chooseRepresentation, errorRepresentation } from '../server/representation';

const KUBECTL_ACCEPT = 'application/vnd.kubernetes.protobuf,application/json';

describe('chooseRepresentation with protobuf', () => {
  it.each([
    { name: 'kubectl typed client, built-in kind', accept: KUBECTL_ACCEPT, watch: false, builtin: true, want: 'application/vnd.kubernetes.protobuf' },
    { name: 'orch brand', accept: 'application/vnd.orch.protobuf', watch: false, builtin: true, want: 'application/vnd.orch.protobuf' },
    { name: 'watch of a built-in kind', accept: KUBECTL_ACCEPT, watch: true, builtin: true, want: 'application/vnd.kubernetes.protobuf' },
    { name: 'custom resource falls back to JSON', accept: KUBECTL_ACCEPT, watch: false, builtin: false, want: 'application/json' },
    { name: 'JSON first wins', accept: 'application/json,application/vnd.orch.protobuf', watch: false, builtin: true, want: 'application/json' },
    { name: 'no Accept: JSON', accept: undefined, watch: false, builtin: true, want: 'application/json' },
  ])('$name', ({ accept, watch, builtin, want }) => {
    expect(chooseRepresentation(accept, watch, builtin).contentType).toBe(want);
  });

  it('custom resource asked for protobuf only: 406', () => {
    expect(() => chooseRepresentation('application/vnd.orch.protobuf', false, false)).toThrow(expect.objectContaining({ code: 406 }));
  });

  it.each([
    { name: 'JSON acceptable', accept: KUBECTL_ACCEPT, want: 'json' },
    { name: 'protobuf only', accept: 'application/vnd.kubernetes.protobuf', want: 'protobuf' },
    { name: 'nothing we serve', accept: 'text/html', want: 'json' },
    { name: 'no Accept', accept: undefined, want: 'json' },
  ])('errorRepresentation: $name', ({ accept, want }) => {
    expect(errorRepresentation(accept)).toBe(want);
  });
});

describe('decodeMedia with protobuf', () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } };
  it.each([
    { name: 'orch brand', type: 'application/vnd.orch.protobuf' },
    { name: 'kubernetes brand', type: 'application/vnd.kubernetes.protobuf' },
  ])('$name', ({ type }) => {
    expect(decodeMedia(encodeProtobuf(cm), type)).toEqual({ value: cm, duplicates: [] });
  });

  it.each([
    {
      name: 'custom resource body: 415',
      body: Buffer.concat([PROTOBUF_MAGIC, Buffer.from([0x0a, 0x15, 0x0a, 0x0e, ...Buffer.from('example.com/v1'), 0x12, 0x03, ...Buffer.from('Foo')])]),
      code: 415,
    },
    { name: 'malformed: 400', body: Buffer.from('not protobuf'), code: 400 },
  ])('$name', ({ body, code }) => {
    let err: unknown;
    try {
      decodeMedia(body, 'application/vnd.orch.protobuf');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).code).toBe(code);
  });
});
