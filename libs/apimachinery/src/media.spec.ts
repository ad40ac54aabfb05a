import { StatusError } from './errors';
import { encodingOf, negotiate, parseAccept, parseContentType, type Offers } from './media';

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

const KUBECTL_TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const KUBECTL_DISCOVERY =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const ALL: Offers = { encodings: ['json', 'yaml', 'protobuf'], table: true };

describe('parseAccept', () => {
  it.each([
    { name: 'empty', input: '', want: [] },
    { name: 'one type', input: 'application/json', want: ['application/json'] },
    { name: 'client order kept', input: 'application/yaml, application/json', want: ['application/yaml', 'application/json'] },
    { name: 'q orders', input: 'application/json;q=0.5, application/yaml', want: ['application/yaml', 'application/json'] },
    { name: 'concrete before wildcard', input: '*/*, application/json', want: ['application/json', '*/*'] },
    { name: 'bare star', input: '*', want: ['*/*'] },
    { name: 'invalid clauses dropped', input: 'json, application/json', want: ['application/json'] },
    {
      name: 'browser',
      input: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      want: ['text/html', 'application/xhtml+xml', 'application/xml', '*/*'],
    },
  ])('$name', ({ input, want }) => {
    expect(parseAccept(input).map((r) => `${r.type}/${r.subtype}`)).toEqual(want);
  });

  it('keeps parameters and q', () => {
    expect(parseAccept('application/json;as=Table; v=v1 ;g=meta.k8s.io;q=0.9')).toEqual([
      { type: 'application', subtype: 'json', params: { as: 'Table', v: 'v1', g: 'meta.k8s.io' }, q: 0.9 },
    ]);
  });
});

describe('negotiate', () => {
  it.each<{ name: string; accept: string | undefined; offers: Offers; want: unknown }>([
    // plain encodings
    { name: 'no header', accept: undefined, offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'empty header', accept: ' ', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'json', accept: 'application/json', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'json with charset', accept: 'application/json; charset=utf-8', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'yaml', accept: 'application/yaml', offers: ALL, want: { kind: 'yaml', contentType: 'application/yaml' } },
    { name: 'yaml not offered falls back', accept: 'application/yaml,application/json', offers: { encodings: ['json'] }, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'star', accept: '*/*', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'application star', accept: 'application/*', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'star takes the server preference', accept: '*/*', offers: { encodings: ['protobuf', 'json'] }, want: { kind: 'protobuf', contentType: 'application/vnd.orch.protobuf' } },
    { name: 'browser gets json', accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    // protobuf
    { name: 'orch protobuf', accept: 'application/vnd.orch.protobuf', offers: ALL, want: { kind: 'protobuf', contentType: 'application/vnd.orch.protobuf' } },
    { name: 'kubernetes protobuf alias', accept: 'application/vnd.kubernetes.protobuf,application/json', offers: ALL, want: { kind: 'protobuf', contentType: 'application/vnd.kubernetes.protobuf' } },
    { name: 'protobuf not offered', accept: 'application/vnd.kubernetes.protobuf,application/json', offers: { encodings: ['json', 'yaml'] }, want: { kind: 'json', contentType: 'application/json' } },
    // tables
    { name: 'kubectl table', accept: KUBECTL_TABLE, offers: ALL, want: { kind: 'table', group: 'meta.k8s.io', version: 'v1', encoding: 'json', contentType: 'application/json' } },
    { name: 'orch table', accept: 'application/json;as=Table;v=v1;g=meta.orch.io', offers: ALL, want: { kind: 'table', group: 'meta.orch.io', version: 'v1', encoding: 'json', contentType: 'application/json' } },
    { name: 'v1beta1 table', accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', offers: ALL, want: { kind: 'table', group: 'meta.k8s.io', version: 'v1beta1', encoding: 'json', contentType: 'application/json' } },
    { name: 'yaml table', accept: 'application/yaml;as=Table;v=v1;g=meta.orch.io', offers: ALL, want: { kind: 'table', group: 'meta.orch.io', version: 'v1', encoding: 'yaml', contentType: 'application/yaml' } },
    { name: 'table not offered falls back', accept: KUBECTL_TABLE, offers: { encodings: ['json'] }, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'protobuf table skipped', accept: 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'unknown table version skipped', accept: 'application/json;as=Table;v=v2;g=meta.k8s.io,application/yaml', offers: ALL, want: { kind: 'yaml', contentType: 'application/yaml' } },
    // metadata-only views (client-go metadata client: protobuf first, then JSON, then the plain fallback)
    {
      name: 'client-go metadata list, protobuf',
      accept: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
      offers: { ...ALL, partialMetadata: true },
      want: { kind: 'partial', as: 'PartialObjectMetadataList', group: 'meta.k8s.io', version: 'v1', encoding: 'protobuf', contentType: 'application/vnd.kubernetes.protobuf' },
    },
    {
      name: 'metadata watch, json',
      accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
      offers: { encodings: ['json'], table: true, partialMetadata: true },
      want: { kind: 'partial', as: 'PartialObjectMetadata', group: 'meta.k8s.io', version: 'v1', encoding: 'json', contentType: 'application/json' },
    },
    {
      name: 'orch spelling, v1beta1',
      accept: 'application/yaml;as=PartialObjectMetadata;g=meta.orch.io;v=v1beta1',
      offers: { ...ALL, partialMetadata: true },
      want: { kind: 'partial', as: 'PartialObjectMetadata', group: 'meta.orch.io', version: 'v1beta1', encoding: 'yaml', contentType: 'application/yaml' },
    },
    { name: 'metadata not offered falls back', accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    // discovery
    {
      name: 'kubectl aggregated discovery',
      accept: KUBECTL_DISCOVERY,
      offers: { encodings: ['json'], discovery: true },
      want: { kind: 'discovery', group: 'apidiscovery.k8s.io', version: 'v2', contentType: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
    },
    {
      name: 'orch aggregated discovery',
      accept: 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList',
      offers: { encodings: ['json'], discovery: true },
      want: { kind: 'discovery', group: 'apidiscovery.orch.io', version: 'v2', contentType: 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList' },
    },
    { name: 'legacy discovery', accept: KUBECTL_DISCOVERY, offers: { encodings: ['json'] }, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'plain json on a discovery endpoint', accept: 'application/json, */*', offers: { encodings: ['json'], discovery: true }, want: { kind: 'json', contentType: 'application/json' } },
    // streams
    { name: 'json watch stream', accept: 'application/json;stream=watch', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'yaml has no stream', accept: 'application/yaml;stream=watch,application/json', offers: ALL, want: { kind: 'json', contentType: 'application/json' } },
    { name: 'unknown stream skipped', accept: 'application/json;stream=other,application/yaml', offers: ALL, want: { kind: 'yaml', contentType: 'application/yaml' } },
  ])('$name', ({ accept, offers, want }) => {
    expect(negotiate(accept, offers)).toEqual(want);
  });

  it.each<{ name: string; accept: string; offers: Offers; want: string }>([
    { name: 'unsupported type', accept: 'text/html', offers: ALL, want: 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf' },
    { name: 'only a table, not offered', accept: 'application/json;as=Table;v=v1;g=meta.orch.io', offers: { encodings: ['json'] }, want: 'only the following media types are accepted: application/json' },
    { name: 'no valid clause', accept: 'garbage', offers: { encodings: ['json'] }, want: 'only the following media types are accepted: application/json' },
    { name: 'foreign table group', accept: 'application/json;as=Table;v=v1;g=meta.example.io', offers: ALL, want: 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf' },
  ])('406: $name', ({ accept, offers, want }) => {
    const err = statusOf(() => negotiate(accept, offers));
    expect({ code: err.code, reason: err.reason, message: err.message }).toEqual({ code: 406, reason: 'NotAcceptable', message: want });
  });
});

describe('parseContentType', () => {
  it.each([
    { name: 'plain', input: 'application/json', want: { mediaType: 'application/json', params: {} } },
    { name: 'charset', input: 'application/json; charset=UTF-8', want: { mediaType: 'application/json', params: { charset: 'UTF-8' } } },
    { name: 'case folded', input: 'Application/JSON;Charset=utf-8', want: { mediaType: 'application/json', params: { charset: 'utf-8' } } },
    { name: 'quoted value', input: 'application/json;as="Ta\\"ble"', want: { mediaType: 'application/json', params: { as: 'Ta"ble' } } },
    { name: 'patch type', input: 'application/merge-patch+json', want: { mediaType: 'application/merge-patch+json', params: {} } },
    { name: 'trailing semicolon', input: 'application/yaml;', want: { mediaType: 'application/yaml', params: {} } },
  ])('$name', ({ input, want }) => {
    expect(parseContentType(input)).toEqual(want);
  });

  it.each([
    { name: 'no subtype', input: 'json' },
    { name: 'empty', input: '' },
    { name: 'bad parameter', input: 'application/json;charset' },
    { name: 'space in type', input: 'application /json' },
  ])('415: $name', ({ input }) => {
    const err = statusOf(() => parseContentType(input, ['application/json']));
    expect({ code: err.code, message: err.message, causes: err.details?.causes }).toEqual({
      code: 415,
      message: 'the body of the request was in an unknown format - accepted media types include: application/json',
      causes: [{ reason: 'UnexpectedServerResponse', message: input }],
    });
  });

  it.each([
    { input: 'application/json', want: 'json' },
    { input: 'application/yaml', want: 'yaml' },
    { input: 'application/vnd.kubernetes.protobuf', want: 'protobuf' },
    { input: 'application/vnd.orch.protobuf', want: 'protobuf' },
    { input: 'text/plain', want: undefined },
  ])('encodingOf($input)', ({ input, want }) => {
    expect(encodingOf(input)).toBe(want);
  });
});
