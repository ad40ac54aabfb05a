import { StatusError, negotiate, type Encoding } from '@orch/apimachinery';
import { MAX_CHOSEN, chooseRepresentation, chosenRepresentations, toPartialObjectMetadata } from './representation';

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

describe('chooseRepresentation remembers what it chose', () => {
  const uncached = (accept: string | undefined, watch: boolean, protobuf: boolean) => {
    const encodings: Encoding[] = watch ? ['json'] : ['json', 'yaml'];
    if (protobuf) encodings.push('protobuf');
    try {
      return negotiate(accept, { encodings, table: true, partialMetadata: true });
    } catch (err) {
      return (err as StatusError).code;
    }
  };
  const chose = (accept: string | undefined, watch: boolean, protobuf: boolean) => {
    try {
      return chooseRepresentation(accept, watch, protobuf);
    } catch (err) {
      return (err as StatusError).code;
    }
  };
  const accepts = [undefined, '', 'application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/vnd.kubernetes.protobuf, application/json', METADATA, METADATA_LIST, 'application/json;as=Table;v=v1;g=meta.k8s.io'];
  // Each header asked under every (watch, protobuf), twice, in an order that puts the cached answer of one flag pair in front of the others.
  it.each(accepts.map((a) => [a]))('the same answer as negotiating afresh, whatever the flags, for Accept %p', (accept) => {
    for (let round = 0; round < 2; round++) {
      for (const [watch, protobuf] of [[false, false], [false, true], [true, false], [true, true]] as const) {
        expect(chose(accept, watch, protobuf)).toEqual(uncached(accept, watch, protobuf));
      }
    }
  });

  it('an unacceptable Accept is 406 every time (not remembered as an answer)', () => {
    for (let i = 0; i < 2; i++) expect(chose('application/yaml', true, false)).toBe(406);
  });

  it('stays bounded: full, it starts over, and answers stay right', () => {
    for (let i = 0; i <= MAX_CHOSEN; i++) chooseRepresentation(`application/json;x=${i}`, false, false);
    expect(chosenRepresentations()).toBeLessThanOrEqual(MAX_CHOSEN);
    expect(chosenRepresentations()).toBeGreaterThan(0);
    expect(chooseRepresentation('application/yaml', false, false)).toEqual(uncached('application/yaml', false, false));
  });

  it('hands out frozen answers, so one request cannot change another\'s', () => {
    expect(Object.isFrozen(chooseRepresentation('application/json', false, true))).toBe(true);
  });
});
