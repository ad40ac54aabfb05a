import { checkFields, normalizeNulls } from './decode';

type Gvk = readonly [group: string, version: string, kind: string];
const POD: Gvk = ['', 'v1', 'Pod'];
const DEPLOYMENT: Gvk = ['apps', 'v1', 'Deployment'];
const CRD: Gvk = ['apiextensions.orch.io', 'v1', 'CustomResourceDefinition'];

const pod = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
  ...extra,
});
const deployment = (spec: Record<string, unknown>) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec });
const crdSchema = (schema: unknown) => ({
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] },
});

interface Row {
  name: string;
  gvk: Gvk;
  obj: unknown;
  unknown?: string[];
  errors?: { field: string; detail: string }[];
}

describe('checkFields', () => {
  it.each<Row>([
    { name: 'a valid pod', gvk: POD, obj: pod({ restartPolicy: 'Always', nodeSelector: { a: 'b' } }) },
    { name: 'unknown root field', gvk: POD, obj: pod({}, { bogus: 1 }), unknown: ['.bogus'] },
    { name: 'unknown spec field', gvk: DEPLOYMENT, obj: deployment({ foo: 1, replicas: 2 }), unknown: ['.spec.foo'] },
    { name: 'unknown container field', gvk: POD, obj: pod({ containers: [{ name: 'a' }, { name: 'b', bogus: true }] }), unknown: ['.spec.containers[1].bogus'] },
    { name: 'unknown metadata field', gvk: POD, obj: pod({}, { metadata: { name: 'p', nme: 'x' } }), unknown: ['.metadata.nme'] },
    {
      name: 'unknown fields deep in a deployment template',
      gvk: DEPLOYMENT,
      obj: deployment({ template: { metadata: { labelz: {} }, spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, proto: 'TCP' }] }] } } }),
      unknown: ['.spec.template.metadata.labelz', '.spec.template.spec.containers[0].ports[0].proto'],
    },
    { name: 'inline volume source fields are known', gvk: POD, obj: pod({ volumes: [{ name: 'v', configMap: { name: 'cm', items: [{ key: 'k', path: 'p' }] } }] }) },
    { name: 'unknown field in an inline volume source', gvk: POD, obj: pod({ volumes: [{ name: 'v', hostPath: { path: '/x', kind: 'Dir' } }] }), unknown: ['.spec.volumes[0].hostPath.kind'] },
    { name: 'apiVersion and kind of list items', gvk: ['', 'v1', 'PodList'], obj: { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [pod({})] } },
    {
      name: 'string for int32',
      gvk: DEPLOYMENT,
      obj: deployment({ replicas: 'three' }),
      errors: [{ field: 'spec.replicas', detail: 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32' }],
    },
    {
      name: 'int32 out of range',
      gvk: DEPLOYMENT,
      obj: deployment({ replicas: 3000000000 }),
      errors: [{ field: 'spec.replicas', detail: 'json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32' }],
    },
    {
      name: 'fraction for int64',
      gvk: POD,
      obj: pod({ activeDeadlineSeconds: 1.5 }),
      errors: [{ field: 'spec.activeDeadlineSeconds', detail: 'json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64' }],
    },
    {
      name: 'number for string, Go path without indices',
      gvk: POD,
      obj: pod({ containers: [{ name: 'c', image: 5 }] }),
      errors: [{ field: 'spec.containers[0].image', detail: 'json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string' }],
    },
    {
      name: 'string for bool',
      gvk: POD,
      obj: pod({ hostNetwork: 'true' }),
      errors: [{ field: 'spec.hostNetwork', detail: 'json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool' }],
    },
    {
      name: 'string for double',
      gvk: CRD,
      obj: crdSchema({ type: 'integer', maximum: 'ten' }),
      errors: [
        {
          field: 'spec.versions[0].schema.openAPIV3Schema.maximum',
          detail: 'json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.maximum of type float64',
        },
      ],
    },
    {
      name: 'object for list',
      gvk: POD,
      obj: pod({ containers: { name: 'c' } }),
      errors: [{ field: 'spec.containers', detail: 'json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container' }],
    },
    {
      name: 'string for struct',
      gvk: DEPLOYMENT,
      obj: deployment({ template: 'nginx' }),
      errors: [{ field: 'spec.template', detail: 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec' }],
    },
    {
      name: 'array for map',
      gvk: POD,
      obj: pod({}, { metadata: { labels: ['a'] } }),
      errors: [{ field: 'metadata.labels', detail: 'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string' }],
    },
    {
      name: 'non-string map value',
      gvk: POD,
      obj: pod({}, { metadata: { labels: { a: 1, b: 'ok' } } }),
      errors: [{ field: 'metadata.labels.a', detail: 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string' }],
    },
    { name: 'whole object of the wrong type', gvk: POD, obj: [1], errors: [{ field: '', detail: 'json: cannot unmarshal array into Go value of type v1.Pod' }] },
    { name: 'quantities: strings, numbers, suffixes', gvk: POD, obj: pod({ containers: [{ name: 'c', resources: { limits: { cpu: '500m', memory: '1Gi', 'example.com/x': 2, e: '1e3', f: '.5' } } }] }) },
    {
      name: 'bad quantity suffix',
      gvk: POD,
      obj: pod({ containers: [{ name: 'c', resources: { requests: { memory: '1GB' } } }] }),
      errors: [{ field: 'spec.containers[0].resources.requests.memory', detail: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" }],
    },
    {
      name: 'bool for quantity',
      gvk: POD,
      obj: pod({ overhead: { cpu: true } }),
      errors: [{ field: 'spec.overhead.cpu', detail: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" }],
    },
    { name: 'int-or-string accepts both', gvk: DEPLOYMENT, obj: deployment({ strategy: { rollingUpdate: { maxSurge: 2, maxUnavailable: '25%' } } }) },
    {
      name: 'int-or-string rejects a fraction',
      gvk: DEPLOYMENT,
      obj: deployment({ strategy: { rollingUpdate: { maxSurge: 1.5 } } }),
      errors: [{ field: 'spec.strategy.rollingUpdate.maxSurge', detail: 'json: cannot unmarshal number 1.5 into Go value of type int32' }],
    },
    {
      name: 'int-or-string rejects a bool',
      gvk: POD,
      obj: pod({ containers: [{ name: 'c', livenessProbe: { httpGet: { port: true } } }] }),
      errors: [{ field: 'spec.containers[0].livenessProbe.httpGet.port', detail: 'json: cannot unmarshal bool into Go value of type int32' }],
    },
    { name: 'RFC 3339 times', gvk: POD, obj: pod({}, { metadata: { name: 'p', creationTimestamp: '2024-02-29T12:00:00Z', deletionTimestamp: '2024-01-01T00:00:00.5+02:00' } }) },
    {
      name: 'not a time',
      gvk: POD,
      obj: pod({}, { metadata: { creationTimestamp: '2024-13-01' } }),
      errors: [{ field: 'metadata.creationTimestamp', detail: 'parsing time "2024-13-01" as "2006-01-02T15:04:05Z07:00": cannot parse "2024-13-01" as RFC 3339' }],
    },
    {
      name: 'impossible date',
      gvk: POD,
      obj: pod({}, { metadata: { creationTimestamp: '2023-02-29T00:00:00Z' } }),
      errors: [{ field: 'metadata.creationTimestamp', detail: 'parsing time "2023-02-29T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "2023-02-29T00:00:00Z" as RFC 3339' }],
    },
    {
      name: 'number for time',
      gvk: POD,
      obj: pod({}, { metadata: { creationTimestamp: 12 } }),
      errors: [{ field: 'metadata.creationTimestamp', detail: 'json: cannot unmarshal number into Go value of type string' }],
    },
    { name: 'microtime', gvk: ['coordination.orch.io', 'v1', 'Lease'], obj: { metadata: { name: 'l' }, spec: { renewTime: '2024-01-01T00:00:00.123456Z', leaseDurationSeconds: 15 } } },
    {
      name: 'base64 bytes',
      gvk: ['', 'v1', 'Secret'],
      obj: { metadata: { name: 's' }, data: { ok: 'aGVsbG8=', bad: 'not base64!' } },
      errors: [{ field: 'data.bad', detail: 'illegal base64 data at input byte 3' }],
    },
    {
      name: 'nulls leave fields unset',
      gvk: POD,
      obj: pod({ nodeSelector: null, containers: [{ name: 'c', ports: null, resources: { limits: null } }], securityContext: null }, { metadata: { name: 'p', labels: null } }),
    },
    { name: 'raw accepts any JSON', gvk: ['apps', 'v1', 'ControllerRevision'], obj: { metadata: { name: 'r' }, revision: 1, data: [1, 'two', { three: null }] } },
    {
      name: 'named list values (extra)',
      gvk: ['authorization.orch.io', 'v1', 'SubjectAccessReview'],
      obj: { spec: { user: 'u', extra: { scopes: ['a', 'b'], bad: 'c' } } },
      errors: [{ field: 'spec.extra.bad', detail: 'json: cannot unmarshal string into Go struct field SubjectAccessReviewSpec.spec.extra of type v1.ExtraValue' }],
    },
    {
      name: 'union: schema or list of schemas, unknown fields inside',
      gvk: CRD,
      obj: crdSchema({ type: 'object', properties: { a: { type: 'array', items: { type: 'string', bogus: 1 } }, b: { items: [{ type: 'string' }] } }, additionalProperties: false }),
      unknown: ['.spec.versions[0].schema.openAPIV3Schema.properties.a.items.bogus'],
    },
    {
      name: 'union: no alternative matches',
      gvk: CRD,
      obj: crdSchema({ type: 'object', additionalProperties: 'yes' }),
      errors: [
        {
          field: 'spec.versions[0].schema.openAPIV3Schema.additionalProperties',
          detail:
            'json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.additionalProperties of type v1.JSONSchemaPropsOrBool',
        },
      ],
    },
    {
      name: 'several problems at once',
      gvk: DEPLOYMENT,
      obj: deployment({ replicas: '1', paused: 1, extra: true }),
      unknown: ['.spec.extra'],
      errors: [
        { field: 'spec.replicas', detail: 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32' },
        { field: 'spec.paused', detail: 'json: cannot unmarshal number into Go struct field DeploymentSpec.spec.paused of type bool' },
      ],
    },
  ])('$name', ({ gvk, obj, unknown = [], errors = [] }) => {
    const result = checkFields(obj, ...gvk);
    expect(result.unknown).toEqual(unknown);
    expect(result.typeErrors.map((e) => ({ field: e.field, detail: e.detail }))).toEqual(errors);
  });

  it('reports type errors as FieldValueTypeInvalid with the offending value', () => {
    const [err] = checkFields(deployment({ replicas: 'x' }), ...DEPLOYMENT).typeErrors;
    expect(err.type).toBe('FieldValueTypeInvalid');
    expect(err.value).toBe('x');
  });

  it('throws for a kind without a schema', () => {
    expect(() => checkFields({}, 'example.com', 'v1', 'Widget')).toThrow('no schema for kind Widget in example.com/v1');
  });
});

describe('normalizeNulls (what Go typed decoding leaves for null)', () => {
  const NODE: Gvk = ['', 'v1', 'Node'];
  const ROLE: Gvk = ['rbac.authorization.orch.io', 'v1', 'Role'];
  const JOB: Gvk = ['batch', 'v1', 'Job'];
  it.each<{ name: string; gvk: Gvk; obj: Record<string, unknown>; want: Record<string, unknown> }>([
    { name: 'a null field is dropped', gvk: JOB, obj: { kind: 'Job', metadata: { name: 'j' }, spec: null }, want: { kind: 'Job', metadata: { name: 'j' } } },
    { name: 'a null nested field is dropped', gvk: JOB, obj: { spec: { template: null, parallelism: null } }, want: { spec: {} } },
    { name: 'a null struct list item becomes an empty struct', gvk: NODE, obj: { spec: { taints: [null, { key: 'a', effect: 'NoSchedule' }] } }, want: { spec: { taints: [{}, { key: 'a', effect: 'NoSchedule' }] } } },
    { name: 'a null rule becomes an empty rule', gvk: ROLE, obj: { rules: [null] }, want: { rules: [{}] } },
    { name: 'a null string list item becomes ""', gvk: ROLE, obj: { rules: [{ verbs: [null, 'get'] }] }, want: { rules: [{ verbs: ['', 'get'] }] } },
    { name: 'a null string map value becomes ""', gvk: POD, obj: { metadata: { labels: { a: null } } }, want: { metadata: { labels: { a: '' } } } },
    { name: 'raw and unknown fields are left alone', gvk: POD, obj: { bogus: null, metadata: { managedFields: [{ fieldsV1: { x: null } }] } }, want: { bogus: null, metadata: { managedFields: [{ fieldsV1: { x: null } }] } } },
    { name: 'an object without null is left alone', gvk: POD, obj: pod({ nodeSelector: { a: 'b' } }), want: pod({ nodeSelector: { a: 'b' } }) },
  ])('$name; checkFields reports nulls exactly when there is something to normalize', ({ gvk, obj, want }) => {
    const changes = JSON.stringify(obj) !== JSON.stringify(want);
    expect(checkFields(structuredClone(obj), ...gvk).nulls).toBe(changes);
    expect(normalizeNulls(obj, ...gvk)).toEqual(want);
  });
});
