import {
  PROTOBUF_MAGIC,
  ProtobufError,
  ProtobufUnsupportedError,
  decodeProtobuf,
  decodeWatchEventProtobuf,
  encodeProtobuf,
  encodeProtobufEnvelope,
  encodeProtobufListPieces,
  encodeProtobufMessage,
  encodeWatchEventProtobuf,
  formatGoDuration,
  hasProtobufSchema,
  parseGoDuration,
  splitProtobufFrames,
} from './index';
import { parseApiVersion } from '../catalog';
import { schemaForKind } from '../schemas/registry';
import { messageType } from './protobufjs-types';
import { protobufKinds, sampleObject } from './samples';

// A minimal protobuf writer, independent of the codec, to state expected bytes with the
// upstream field numbers written out literally.
const varint = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
};
const bytesField = (field: number, payload: number[] | string): number[] => {
  const b = typeof payload === 'string' ? [...Buffer.from(payload)] : payload;
  return [...varint((field << 3) | 2), ...varint(b.length), ...b];
};
const intField = (field: number, n: number): number[] => [...varint(field << 3), ...varint(n)];
const mapEntry = (field: number, key: string, value: number[] | string): number[] => bytesField(field, [...bytesField(1, key), ...bytesField(2, value)]);
/** magic + Unknown{typeMeta{apiVersion=1, kind=2}=1, raw=2, contentEncoding=3, contentType=4}. */
const envelope = (apiVersion: string, kind: string, raw: number[]): Buffer =>
  Buffer.from([...PROTOBUF_MAGIC, ...bytesField(1, [...bytesField(1, apiVersion), ...bytesField(2, kind)]), ...bytesField(2, raw), ...bytesField(3, []), ...bytesField(4, [])]);

describe('round trip of every built-in kind (JSON → protobuf → JSON)', () => {
  const kinds = protobufKinds();

  it('covers the catalog', () => {
    const names = kinds.map((k) => `${k.apiVersion}/${k.kind}`);
    for (const want of ['v1/Pod', 'v1/PodList', 'apps/v1/Deployment', 'v1/Status', 'v1/DeleteOptions', 'autoscaling/v1/Scale', 'policy/v1/Eviction', 'apiextensions.orch.io/v1/CustomResourceDefinition']) {
      expect(names).toContain(want);
    }
    expect(kinds.length).toBeGreaterThan(140);
  });

  it.each(kinds.map((k) => ({ name: `${k.apiVersion} ${k.kind}`, ...k })))('$name', ({ apiVersion, kind }) => {
    const obj = sampleObject(apiVersion, kind);
    const wire = encodeProtobuf(obj);
    expect(wire.subarray(0, 4)).toEqual(PROTOBUF_MAGIC);
    expect(decodeProtobuf(wire)).toEqual(obj);
  });
});

describe('protobufjs, with message types built from the same schema, reads the bytes and writes them back unchanged', () => {
  it.each(protobufKinds().map((k) => ({ name: `${k.apiVersion} ${k.kind}`, ...k })))('$name', ({ apiVersion, kind }) => {
    const { group, version } = parseApiVersion(apiVersion);
    const type = messageType(schemaForKind(group, version, kind)!);
    const message = encodeProtobufMessage(sampleObject(apiVersion, kind));
    expect(Buffer.from(type.encode(type.decode(message)).finish()).toString('hex')).toBe(message.toString('hex'));
  });
});

describe('wire edge cases', () => {
  const cm = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data });
  it.each<{ name: string; data: Record<string, string> }>([
    { name: 'a 127-byte string (one length byte)', data: { a: 'x'.repeat(127) } },
    { name: 'a 128-byte string (two length bytes)', data: { a: 'x'.repeat(128) } },
    { name: 'a 20,000-byte value (three length bytes, message bodies moved)', data: { a: 'y'.repeat(20_000) } },
    { name: 'short and long non-ASCII strings', data: { 'ключ': 'значение', b: '日本語'.repeat(30), c: 'e\u0301', d: '😀'.repeat(50) } },
  ])('$name', ({ data }) => {
    const obj = cm(data);
    const want = [...bytesField(1, bytesField(1, 'c')), ...Object.entries(data).flatMap(([k, v]) => mapEntry(2, k, v))];
    expect(encodeProtobuf(obj).toString('hex')).toBe(envelope('v1', 'ConfigMap', want).toString('hex'));
    expect(decodeProtobuf(encodeProtobuf(obj))).toEqual(obj);
  });

  it.each([
    { name: 'negative int32 (ten bytes)', spec: { priority: -5 }, bytes: [...varint(25 << 3), 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01] },
    { name: 'int64 beyond 32 bits', spec: { activeDeadlineSeconds: 2 ** 40 }, bytes: [...varint(5 << 3), 0x80, 0x80, 0x80, 0x80, 0x80, 0x20] },
  ])('$name', ({ spec, bytes }) => {
    const obj = { apiVersion: 'v1', kind: 'Pod', spec };
    const wire = encodeProtobuf(obj);
    expect(wire.toString('hex')).toContain(Buffer.from(bytes).toString('hex'));
    expect(decodeProtobuf(wire)).toEqual(obj);
  });

  it('a Duration beyond 2^53 nanoseconds round-trips exactly', () => {
    const obj = { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name: 'f' } };
    expect(decodeProtobuf(encodeProtobuf(obj))).toEqual(obj);
    expect(formatGoDuration(parseGoDuration('2562047h47m16.854775807s'))).toBe('2562047h47m16.854775807s');
  });

  it.each([
    { name: 'a field longer than its message', raw: [...bytesField(1, [0x0a, 0x05, 0x61])] },
    { name: 'a length past the end', raw: [0x0a, 0x7f] },
    { name: 'an unknown wire type', raw: [0x0f] },
  ])('malformed: $name is a ProtobufError', ({ raw }) => {
    const run = () => decodeProtobuf(envelope('v1', 'Pod', raw));
    expect(run).toThrow(ProtobufError);
    expect(run).toThrow(/^invalid protobuf Pod: /);
  });

  it('unknown fields are skipped', () => {
    const raw = [...intField(99, 7), ...bytesField(98, 'x'), ...bytesField(1, bytesField(1, 'p'))];
    expect(decodeProtobuf(envelope('v1', 'Pod', raw))).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
  });
});

describe('lists of items encoded once', () => {
  const pods = [sampleObject('v1', 'Pod'), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b', resourceVersion: '9' } }];
  it.each([
    { name: 'two items, a continue token', list: { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '10', continue: 'abc', remainingItemCount: 3 }, items: pods } },
    { name: 'no items', list: { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '10' }, items: [] } },
  ])('encodeProtobufListPieces make encodeProtobuf of the whole list: $name', ({ list }) => {
    const { items, ...head } = list;
    expect(Buffer.concat([...encodeProtobufListPieces(head, items.map(encodeProtobufMessage), 64)]).toString('hex')).toBe(encodeProtobuf(list).toString('hex'));
  });

  it.each([
    { name: 'no items', count: 0, pieceBytes: 64, pieces: 1 },
    { name: 'an item per piece', count: 5, pieceBytes: 1, pieces: 6 },
    { name: 'several items per piece', count: 40, pieceBytes: 200, pieces: undefined },
    { name: 'one piece of items', count: 40, pieceBytes: 1 << 20, pieces: 2 },
  ])('encodeProtobufListPieces in pieces of about pieceBytes ($name)', ({ count, pieceBytes, pieces: want }) => {
    const head = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '10' } };
    const items = Array.from({ length: count }, (_, i) => ({ ...pods[i % 2], metadata: { name: `p-${i}`, resourceVersion: String(i) } }));
    const messages = items.map(encodeProtobufMessage);
    const pieces = [...encodeProtobufListPieces(head, messages, pieceBytes)];
    expect(Buffer.concat(pieces).toString('hex')).toBe(encodeProtobuf({ ...head, items }).toString('hex'));
    // The head, then runs of items of about pieceBytes (the envelope's tail rides with the last).
    const largest = Math.max(0, ...messages.map((m) => m.length + 8));
    for (const p of pieces.slice(1)) expect(p.length).toBeLessThanOrEqual(pieceBytes + largest);
    if (want !== undefined) expect(pieces).toHaveLength(want);
    else expect(pieces.length).toBeGreaterThan(2);
  });

  it.each(pods.map((pod) => ({ name: pod.metadata!.name!, pod })))('encodeProtobufEnvelope of the message equals encodeProtobuf: $name', ({ pod }) => {
    expect(encodeProtobufEnvelope(pod, encodeProtobufMessage(pod)).toString('hex')).toBe(encodeProtobuf(pod).toString('hex'));
  });

  it('a kind that is not a list is refused', () => {
    expect(() => encodeProtobufListPieces({ apiVersion: 'v1', kind: 'Pod' }, [], 64).next()).toThrow(/Pod is not a list kind/);
  });
});

describe('encoding uses the upstream field numbers', () => {
  const meta = (name: string) => bytesField(1, bytesField(1, name));
  it.each([
    {
      name: 'ConfigMap: ObjectMeta name=1 and labels=11 (map entries), data=2, binaryData=3',
      input: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { app: 'x' } }, data: { a: 'b' }, binaryData: { k: 'AQI=' } },
      want: envelope('v1', 'ConfigMap', [
        ...bytesField(1, [...bytesField(1, 'c'), ...mapEntry(11, 'app', 'x')]),
        ...mapEntry(2, 'a', 'b'),
        ...mapEntry(3, 'k', [1, 2]),
      ]),
    },
    {
      name: 'Namespace: creationTimestamp=8 as Time{seconds=1, nanos=2}',
      input: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', creationTimestamp: '2024-01-02T03:04:05Z' } },
      want: envelope('v1', 'Namespace', bytesField(1, [...bytesField(1, 'x'), ...bytesField(8, [...intField(1, 1704164645), ...intField(2, 0)])])),
    },
    {
      name: 'Deployment: replicas=1, strategy=4 {type=1, rollingUpdate=2 {maxUnavailable=1, maxSurge=2 IntOrString{type=1,intVal=2,strVal=3}}}',
      input: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { replicas: 3, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } } },
      },
      want: envelope('apps/v1', 'Deployment', [
        ...meta('d'),
        ...bytesField(2, [
          ...intField(1, 3),
          ...bytesField(4, [
            ...bytesField(1, 'RollingUpdate'),
            ...bytesField(2, [
              ...bytesField(1, [...intField(1, 0), ...intField(2, 1), ...bytesField(3, '')]),
              ...bytesField(2, [...intField(1, 1), ...intField(2, 0), ...bytesField(3, '25%')]),
            ]),
          ]),
        ]),
      ]),
    },
    {
      name: 'Pod: containers=2 {name=1, image=2, ports=6 {containerPort=3}, resources=8 {limits=1 map<string, Quantity{string=1}>}}',
      input: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '500m' } } }] },
      },
      want: envelope('v1', 'Pod', [
        ...meta('p'),
        ...bytesField(2, bytesField(2, [...bytesField(1, 'c'), ...bytesField(2, 'nginx'), ...bytesField(6, intField(3, 80)), ...bytesField(8, mapEntry(1, 'cpu', bytesField(1, '500m')))])),
      ]),
    },
    {
      name: 'Role: rules=2 {verbs=1, apiGroups=2, resources=3} keeps the empty core group',
      input: { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] },
      want: envelope('rbac.authorization.orch.io/v1', 'Role', [...meta('r'), ...bytesField(2, [...bytesField(1, 'get'), ...bytesField(2, ''), ...bytesField(3, 'pods')])]),
    },
    {
      name: 'Status: metadata=1 ListMeta, status=2, message=3, reason=4, code=6',
      input: { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message: 'm', reason: 'NotFound', code: 404 },
      want: envelope('v1', 'Status', [...bytesField(1, []), ...bytesField(2, 'Failure'), ...bytesField(3, 'm'), ...bytesField(4, 'NotFound'), ...intField(6, 404)]),
    },
    {
      name: 'PodList: metadata=1 ListMeta{resourceVersion=2}, items=2',
      input: { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '7' }, items: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } }] },
      want: envelope('v1', 'PodList', [...bytesField(1, bytesField(2, '7')), ...bytesField(2, meta('a'))]),
    },
  ])('$name', ({ input, want }) => {
    expect(encodeProtobuf(input).toString('hex')).toBe(want.toString('hex'));
    expect(decodeProtobuf(want)).toEqual(input);
  });
});

describe('decoding what kubectl 1.32 sends', () => {
  // Request bodies captured from kubectl v1.32.4 (gogo-encoded: zero values of
  // non-pointer fields are on the wire; those of omitempty fields are dropped as Go's JSON
  // encoding does: metadata.generation 0, status.denied false; status.allowed has no omitempty).
  it.each([
    {
      name: 'create namespace x',
      hex: '6b3873000a0f0a02763112094e616d65737061636512190a110a017812001a0022002a0032003800420012001a020a001a002200',
      want: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' }, spec: {}, status: {} },
    },
    {
      name: 'create configmap c --from-literal=a=b',
      hex: '6b3873000a0f0a0276311209436f6e6669674d6170121b0a110a016312001a0022002a0032003800420012060a01611201621a002200',
      want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } },
    },
    {
      name: 'create role r --verb=get --resource=pods',
      hex: '6b3873000a240a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311204526f6c6512220a110a017212001a0022002a00320038004200120d0a0367657412001a04706f64731a002200',
      want: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'r' },
        rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      },
    },
    {
      name: 'create rolebinding rb --role=r --user=alice',
      hex: '6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e6712660a120a02726212001a0022002a00320038004200122a0a04557365721219726261632e617574686f72697a6174696f6e2e6b38732e696f1a05616c69636522001a240a19726261632e617574686f72697a6174696f6e2e6b38732e696f1204526f6c651a01721a002200',
      want: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'rb' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      },
    },
    {
      name: 'auth can-i create pods',
      hex: '6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a656374416363657373526576696577123f0a100a0012001a0022002a0032003800420012210a1f0a0764656661756c7412066372656174651a0022002a04706f647332003a001a08080012001a0020001a002200',
      want: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } },
        status: { allowed: false },
      },
    },
    {
      name: 'drain: DeleteOptions with an empty raw',
      hex: envelope('v1', 'DeleteOptions', []).toString('hex'),
      want: { apiVersion: 'v1', kind: 'DeleteOptions' },
    },
  ])('$name', ({ hex, want }) => {
    expect(decodeProtobuf(Buffer.from(hex, 'hex'))).toEqual(want);
  });
});

describe('watch events', () => {
  const pod = sampleObject('v1', 'Pod');
  it.each([
    { name: 'ADDED', type: 'ADDED', object: pod },
    { name: 'DELETED', type: 'DELETED', object: pod },
    { name: 'BOOKMARK', type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '12', annotations: { 'orch.io/initial-events-end': 'true' } } } },
    { name: 'ERROR', type: 'ERROR', object: { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', reason: 'Expired', code: 410 } },
  ])('$name: length-prefixed WatchEvent{type=1, object=2 RawExtension{raw=1 magic+Unknown}}', ({ type, object }) => {
    const frame = encodeWatchEventProtobuf(type, object);
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
    const event = frame.subarray(4);
    expect([...event.subarray(0, 2 + type.length)]).toEqual(bytesField(1, type));
    expect(decodeWatchEventProtobuf(event)).toEqual({ type, object });
  });

  it('splits a stream into frames, keeping an incomplete tail', () => {
    const a = encodeWatchEventProtobuf('ADDED', pod);
    const b = encodeWatchEventProtobuf('MODIFIED', pod);
    const { frames, rest } = splitProtobufFrames(Buffer.concat([a, b.subarray(0, 10)]));
    expect(frames.map((f) => decodeWatchEventProtobuf(f).type)).toEqual(['ADDED']);
    expect(rest).toEqual(b.subarray(0, 10));
  });
});

describe('errors', () => {
  it.each([
    { name: 'no magic prefix', run: () => decodeProtobuf(Buffer.from('{"kind":"Pod"}')), want: ProtobufError, message: /magic prefix/ },
    { name: 'truncated envelope', run: () => decodeProtobuf(Buffer.from([...PROTOBUF_MAGIC, 0x0a, 0x20])), want: ProtobufError, message: /invalid protobuf envelope/ },
    { name: 'custom resource body', run: () => decodeProtobuf(envelope('example.com/v1', 'Widget', [])), want: ProtobufUnsupportedError, message: /Widget in example.com\/v1 has no protobuf encoding/ },
    { name: 'custom resource object', run: () => encodeProtobuf({ apiVersion: 'example.com/v1', kind: 'Widget' }), want: ProtobufUnsupportedError, message: /no protobuf encoding/ },
    { name: 'Table has no protobuf form', run: () => encodeProtobuf({ apiVersion: 'meta.orch.io/v1', kind: 'Table' }), want: ProtobufUnsupportedError, message: /no protobuf encoding/ },
    { name: 'missing kind', run: () => encodeProtobuf({ apiVersion: 'v1' }), want: ProtobufError, message: /needs apiVersion and kind/ },
    {
      name: 'wrong JSON type names the path',
      run: () => encodeProtobuf({ apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: { containers: [{ name: 'c', ports: [{ containerPort: 'http' }] }] } }),
      want: ProtobufError,
      message: /^spec\.containers\[0\]\.ports\[0\]\.containerPort: expected an integer$/,
    },
    { name: 'bad time', run: () => encodeProtobuf({ apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: 'yesterday' } }), want: ProtobufError, message: /^metadata\.creationTimestamp: parsing time/ },
    {
      name: 'content encoding',
      run: () => decodeProtobuf(Buffer.from([...PROTOBUF_MAGIC, ...bytesField(1, [...bytesField(1, 'v1'), ...bytesField(2, 'Pod')]), ...bytesField(3, 'gzip')])),
      want: ProtobufError,
      message: /unsupported protobuf content encoding "gzip"/,
    },
  ])('$name', ({ run, want, message }) => {
    expect(run).toThrow(want);
    expect(run).toThrow(message);
  });

  it.each([
    { name: 'built-in kind', input: ['apps', 'v1', 'Deployment'], want: true },
    { name: 'k8s.io alias group', input: ['rbac.authorization.k8s.io', 'v1', 'Role'], want: true },
    { name: 'list kind', input: ['', 'v1', 'ConfigMapList'], want: true },
    { name: 'meta kind in any group', input: ['apps', 'v1', 'Status'], want: true },
    { name: 'custom resource', input: ['example.com', 'v1', 'Widget'], want: false },
    { name: 'custom resource named like a built-in kind', input: ['apps.example.com', 'v1', 'Deployment'], want: false },
    { name: 'Table', input: ['meta.orch.io', 'v1', 'Table'], want: false },
  ])('hasProtobufSchema: $name', ({ input, want }) => {
    expect(hasProtobufSchema(input[0], input[1], input[2])).toBe(want);
  });
});

describe('decoding zero values written by Go clients', () => {
  it.each([
    {
      name: 'a pointer field holding 0 stays (replicas: 0); an omitempty non-pointer false and 0 go (paused, minReadySeconds, generation)',
      raw: [...bytesField(1, [...bytesField(1, 'd'), ...intField(7, 0)]), ...bytesField(2, [...intField(1, 0), ...intField(5, 0), ...intField(7, 0)])],
      want: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 0 } },
    },
    {
      name: 'container stdin/tty false go; a non-omitempty empty name stays',
      raw: bytesField(2, bytesField(2, [...bytesField(1, ''), ...intField(16, 0), ...intField(18, 0)])),
      want: { apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: '' }] } },
    },
    {
      name: 'a pointer string holding "" stays (PersistentVolumeClaim storageClassName: no class)',
      raw: bytesField(2, bytesField(5, '')),
      want: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', spec: { storageClassName: '' } },
    },
    {
      name: 'an omitempty non-pointer string holding "" goes (PersistentVolume storageClassName)',
      raw: bytesField(2, bytesField(6, '')),
      want: { apiVersion: 'v1', kind: 'PersistentVolume', spec: {} },
    },
    {
      name: 'a non-omitempty false stays (SubjectAccessReview status.allowed)',
      raw: bytesField(3, [...intField(1, 0), ...intField(4, 0)]),
      want: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status: { allowed: false } },
    },
    {
      name: 'empty optional strings and zero times are left out; empty messages stay',
      raw: [...bytesField(1, [...bytesField(1, 'd'), ...bytesField(2, ''), ...bytesField(8, [])]), ...bytesField(2, bytesField(4, bytesField(1, '')))],
      want: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { strategy: {} } },
    },
    {
      name: 'an empty list is [] in JSON',
      raw: bytesField(1, bytesField(2, '5')),
      want: { apiVersion: 'apps/v1', kind: 'DeploymentList', metadata: { resourceVersion: '5' }, items: [] },
    },
  ])('$name', ({ raw, want }) => {
    expect(decodeProtobuf(envelope(want.apiVersion, want.kind, raw))).toEqual(want);
  });
});

describe('Go durations', () => {
  it.each([
    { name: 'zero', text: '0s', nanos: 0n },
    { name: 'hours minutes seconds', text: '1h2m3.5s', nanos: 3723_500_000_000n },
    { name: 'whole hour', text: '1h0m0s', nanos: 3600_000_000_000n },
    { name: 'milliseconds', text: '1.5ms', nanos: 1_500_000n },
    { name: 'microseconds', text: '2\u00b5s', nanos: 2_000n },
    { name: 'nanoseconds', text: '7ns', nanos: 7n },
    { name: 'negative', text: '-2m0s', nanos: -120_000_000_000n },
  ])('$name', ({ text, nanos }) => {
    expect(parseGoDuration(text)).toBe(nanos);
    expect(formatGoDuration(nanos)).toBe(text);
  });

  it.each([
    { name: 'non-canonical input', text: '90s', nanos: 90_000_000_000n },
    { name: 'bare zero', text: '0', nanos: 0n },
    { name: 'us spelling', text: '3us', nanos: 3_000n },
  ])('parses $name', ({ text, nanos }) => expect(parseGoDuration(text)).toBe(nanos));

  it.each(['', '5', '1x', '.s', 'h'])('rejects %j', (text) => expect(() => parseGoDuration(text)).toThrow(/invalid duration/));
});

describe('times', () => {
  const ns = (creationTimestamp: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', creationTimestamp } });
  it.each([
    { name: 'UTC', input: '2024-02-29T23:59:59Z', want: '2024-02-29T23:59:59Z' },
    { name: 'fraction dropped', input: '2024-02-29T23:59:59.75Z', want: '2024-02-29T23:59:59Z' },
    { name: 'offset normalized to UTC', input: '2024-03-01T01:00:00+02:00', want: '2024-02-29T23:00:00Z' },
    { name: 'before 1970', input: '1969-07-20T20:17:40Z', want: '1969-07-20T20:17:40Z' },
  ])('$name', ({ input, want }) => {
    expect(decodeProtobuf(encodeProtobuf(ns(input))).metadata.creationTimestamp).toBe(want);
  });

  it.each(['2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z', '2024-13-01T00:00:00Z'])('rejects %s', (t) => {
    expect(() => encodeProtobuf(ns(t))).toThrow(/^metadata\.creationTimestamp: parsing time/);
  });
});
