import { BUILTIN_RESOURCES } from '../catalog-data';
import { isScalar, type FieldSchema, type FieldType } from './model';
import { allTypeSchemas, jsonFields, schemaForKind, typeSchema } from './registry';

function refsOf(t: FieldType): string[] {
  if (isScalar(t)) return [];
  if ('array' in t) return refsOf(t.array);
  if ('map' in t) return refsOf(t.map);
  return [t.ref];
}

function field(typeName: string, name: string): FieldSchema {
  const schema = typeSchema(typeName);
  if (!schema) throw new Error(`no type ${typeName}`);
  const f = schema.fields.find((x) => x.name === name);
  if (!f) throw new Error(`no field ${typeName}.${name}`);
  return f;
}

const CORE = 'io.orch.api.core.v1';
const META = 'io.orch.apimachinery.pkg.apis.meta.v1';

describe('schema coverage', () => {
  const kinds = BUILTIN_RESOURCES.flatMap((r) => [
    { group: r.group, version: r.version, kind: r.kind },
    { group: r.group, version: r.version, kind: r.listKind },
    ...r.subresources.map((s) => ({ group: s.group ?? r.group, version: s.version ?? r.version, kind: s.kind })),
  ]);

  it.each(kinds)('$group/$version $kind has a root schema', ({ group, version, kind }) => {
    const schema = schemaForKind(group, version, kind);
    expect(schema?.kind).toBe(true);
    expect(jsonFields(schema!).has('apiVersion')).toBe(true);
  });

  it.each([
    { group: '', version: 'v1', kind: 'Status' },
    { group: '', version: 'v1', kind: 'DeleteOptions' },
    { group: 'apps', version: 'v1', kind: 'DeleteOptions' },
    { group: 'meta.orch.io', version: 'v1', kind: 'Table' },
    { group: '', version: 'v1', kind: 'WatchEvent' },
    { group: 'meta.orch.io', version: 'v1', kind: 'PartialObjectMetadataList' },
    { group: 'autoscaling', version: 'v1', kind: 'Scale' },
    { group: 'policy', version: 'v1', kind: 'Eviction' },
    { group: '', version: 'v1', kind: 'Binding' },
    { group: 'authentication.orch.io', version: 'v1', kind: 'TokenRequest' },
    { group: 'authentication.orch.io', version: 'v1', kind: 'TokenReview' },
    { group: 'authorization.orch.io', version: 'v1', kind: 'SubjectAccessReview' },
    { group: 'authorization.orch.io', version: 'v1', kind: 'SelfSubjectRulesReview' },
  ])('meta and operation kind $kind resolves in $group/$version', ({ group, version, kind }) => {
    expect(schemaForKind(group, version, kind)).toBeDefined();
  });

  it('has no schema for unknown kinds and groups', () => {
    expect(schemaForKind('apps', 'v1', 'Pod')).toBeUndefined();
    expect(schemaForKind('example.com', 'v1', 'Widget')).toBeUndefined();
  });

  it('resolves every referenced type name', () => {
    const types = allTypeSchemas();
    expect(types.length).toBeGreaterThan(500);
    const missing = types.flatMap((t) => [...t.fields.flatMap((f) => refsOf(f.type)), ...(t.items ? refsOf(t.items) : [])]).filter((r) => !typeSchema(r));
    expect(missing).toEqual([]);
  });

  it('gives every protobuf-encoded type unique field numbers', () => {
    for (const t of allTypeSchemas()) {
      const numbers = t.fields.filter((f) => f.proto > 0).map((f) => f.proto);
      expect({ type: t.name, dup: numbers.filter((n, i) => numbers.indexOf(n) !== i) }).toEqual({ type: t.name, dup: [] });
    }
  });
});

describe('schema facts', () => {
  it.each([
    { name: 'PodSpec.containers', type: `${CORE}.PodSpec`, field: 'containers', want: { proto: 2, required: true, patchStrategy: 'merge', patchMergeKey: 'name', listType: 'map', listMapKeys: ['name'] } },
    { name: 'PodSpec.volumes', type: `${CORE}.PodSpec`, field: 'volumes', want: { proto: 1, patchStrategy: 'merge,retainKeys', listType: 'map' } },
    { name: 'Container.ports', type: `${CORE}.Container`, field: 'ports', want: { proto: 6, patchMergeKey: 'containerPort', listMapKeys: ['containerPort', 'protocol'] } },
    { name: 'ContainerPort.protocol', type: `${CORE}.ContainerPort`, field: 'protocol', want: { proto: 4, default: 'TCP', enum: ['TCP', 'UDP', 'SCTP'] } },
    { name: 'Volume.volumeSource', type: `${CORE}.Volume`, field: 'volumeSource', want: { proto: 2, inline: true, type: { ref: `${CORE}.VolumeSource` } } },
    { name: 'PodSpec.nodeSelector', type: `${CORE}.PodSpec`, field: 'nodeSelector', want: { proto: 7, mapType: 'atomic', type: { map: 'string' } } },
    { name: 'ResourceRequirements.limits', type: `${CORE}.ResourceRequirements`, field: 'limits', want: { type: { map: 'quantity' } } },
    { name: 'ObjectMeta.finalizers', type: `${META}.ObjectMeta`, field: 'finalizers', want: { proto: 14, listType: 'set', patchStrategy: 'merge' } },
    { name: 'ObjectMeta.creationTimestamp', type: `${META}.ObjectMeta`, field: 'creationTimestamp', want: { proto: 8, type: 'time' } },
    { name: 'DeploymentSpec.strategy', type: 'io.orch.api.apps.v1.DeploymentSpec', field: 'strategy', want: { proto: 4, patchStrategy: 'retainKeys' } },
    { name: 'DeploymentSpec.replicas', type: 'io.orch.api.apps.v1.DeploymentSpec', field: 'replicas', want: { proto: 1, type: 'int32' } },
    { name: 'ServicePort.targetPort', type: `${CORE}.ServicePort`, field: 'targetPort', want: { proto: 4, type: 'int-or-string' } },
    { name: 'Secret.data', type: `${CORE}.Secret`, field: 'data', want: { proto: 2, type: { map: 'bytes' } } },
    {
      name: 'JSONSchemaProps.properties (recursive)',
      type: 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
      field: 'properties',
      want: { proto: 29, type: { map: { ref: 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps' } } },
    },
    { name: 'UserInfo.extra', type: 'io.orch.api.authentication.v1.UserInfo', field: 'extra', want: { proto: 4, type: { map: { ref: 'io.orch.api.authentication.v1.ExtraValue' } } } },
    { name: 'LimitedPriorityLevelConfiguration.nominalConcurrencyShares', type: 'io.orch.api.flowcontrol.v1.LimitedPriorityLevelConfiguration', field: 'nominalConcurrencyShares', want: { proto: 1, type: 'int32' } },
    { name: 'Pod apiVersion (TypeMeta, not in protobuf)', type: `${CORE}.Pod`, field: 'apiVersion', want: { proto: 0, type: 'string' } },
  ])('$name', ({ type, field: name, want }) => {
    expect(field(type, name)).toMatchObject(want);
  });

  it.each([
    { name: `${META}.Time`, want: { scalar: 'time' } },
    { name: 'io.orch.apimachinery.pkg.api.resource.Quantity', want: { scalar: 'quantity' } },
    { name: 'io.orch.apimachinery.pkg.util.intstr.IntOrString', want: { scalar: 'int-or-string' } },
    { name: `${CORE}.ObjectReference`, want: { structType: 'atomic' } },
    { name: 'io.orch.api.authentication.v1.ExtraValue', want: { items: 'string' } },
    { name: 'io.orch.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool', want: { union: true } },
  ])('type $name', ({ name, want }) => {
    expect(typeSchema(name)).toMatchObject(want);
  });
});
