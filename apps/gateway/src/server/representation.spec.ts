import { StatusError } from '@orch/apimachinery';
import { chooseRepresentation, toPartialObjectMetadata } from './representation';

const METADATA_LIST = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA = 'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1,application/json';
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', labels: { a: 'b' }, resourceVersion: '7' }, spec: { containers: [] } };
const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '9', continue: 'c' }, items: [pod] };

describe('metadata-only views (client-go metadata clients)', () => {
  it('negotiates PartialObjectMetadataList in protobuf first, as client-go asks', () => {
    expect(chooseRepresentation(METADATA_LIST, false, true)).toMatchObject({ kind: 'partial', as: 'PartialObjectMetadataList', group: 'meta.k8s.io', version: 'v1', encoding: 'protobuf' });
    // A kind without a protobuf form answers the JSON clause.
    expect(chooseRepresentation(METADATA_LIST, false, false)).toMatchObject({ kind: 'partial', as: 'PartialObjectMetadataList', encoding: 'json' });
  });

  it.each([
    { name: 'object', body: pod, accept: METADATA, want: { kind: 'PartialObjectMetadata', apiVersion: 'meta.orch.io/v1', metadata: pod.metadata } },
    {
      name: 'list',
      body: list,
      accept: METADATA_LIST,
      want: { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: list.metadata, items: [{ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pod.metadata }] },
    },
    { name: 'Status passes through', body: { kind: 'Status', apiVersion: 'v1', status: 'Success' }, accept: METADATA, want: { kind: 'Status', apiVersion: 'v1', status: 'Success' } },
  ])('$name', ({ body, accept, want }) => {
    const repr = chooseRepresentation(accept, false, false);
    if (repr.kind !== 'partial') throw new Error('not negotiated');
    expect(toPartialObjectMetadata(body, repr)).toEqual(want);
  });

  it.each([
    { name: 'a list as PartialObjectMetadata', body: list, accept: METADATA, want: 'you requested PartialObjectMetadata, but the requested object is a list' },
    { name: 'an object as PartialObjectMetadataList', body: pod, accept: METADATA_LIST, want: 'you requested PartialObjectMetadataList, but the requested object is not a list' },
  ])('406 for $name', ({ body, accept, want }) => {
    const repr = chooseRepresentation(accept, false, false);
    if (repr.kind !== 'partial') throw new Error('not negotiated');
    let err: unknown;
    try {
      toPartialObjectMetadata(body, repr);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StatusError);
    expect({ code: (err as StatusError).code, message: (err as StatusError).message }).toEqual({ code: 406, message: want });
  });
});
