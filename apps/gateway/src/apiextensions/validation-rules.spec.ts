import type { CustomResourceDefinition, JSONSchemaProps } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import { CompiledValidationRules, crdRuleErrors } from './validation-rules';

const SCHEMA: JSONSchemaProps = {
  type: 'object',
  'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('w')", message: 'name must start with w' }],
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.replicas <= self.maxReplicas', messageExpression: "'replicas ' + string(self.replicas) + ' above ' + string(self.maxReplicas)" },
        { rule: "!has(self.mode) || self.mode != 'off' || self.replicas == 0", message: 'off means zero replicas', fieldPath: '.replicas', reason: 'FieldValueForbidden' },
      ],
      properties: {
        replicas: { type: 'integer' },
        maxReplicas: { type: 'integer' },
        mode: { type: 'string' },
        storage: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'storage is immutable' }] },
        ports: {
          type: 'array',
          maxItems: 10,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', maxLength: 20 }, port: { type: 'integer' } },
            'x-kubernetes-validations': [{ rule: '!has(oldSelf.port) || self.port >= oldSelf.port', message: 'ports only grow' }],
          },
        },
      },
    },
  },
};

const widget = (spec: Record<string, unknown>, name = 'w1'): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec }) as KubeObject;

describe('CompiledValidationRules', () => {
  const rules = CompiledValidationRules.compile(SCHEMA);

  it('compiles every rule', () => {
    expect(rules.problems).toEqual([]);
  });

  it.each<{ name: string; obj: KubeObject; old?: KubeObject; want: string[] }>([
    { name: 'a valid object', obj: widget({ replicas: 1, maxReplicas: 3, storage: 'a' }), want: [] },
    { name: 'the root rule sees metadata', obj: widget({ replicas: 1, maxReplicas: 3 }, 'x1'), want: ['<nil>: Invalid value: "object": name must start with w'] },
    { name: 'messageExpression', obj: widget({ replicas: 5, maxReplicas: 3 }), want: ['spec: Invalid value: "object": replicas 5 above 3'] },
    { name: 'fieldPath and reason', obj: widget({ replicas: 2, maxReplicas: 3, mode: 'off' }), want: ['spec.replicas: Forbidden: off means zero replicas'] },
    { name: 'a transition rule is skipped on create', obj: widget({ replicas: 1, maxReplicas: 3, storage: 'a' }), want: [] },
    { name: 'a transition rule holds', obj: widget({ replicas: 1, maxReplicas: 3, storage: 'a' }), old: widget({ replicas: 1, maxReplicas: 3, storage: 'a' }), want: [] },
    { name: 'a transition rule is broken', obj: widget({ replicas: 1, maxReplicas: 3, storage: 'b' }), old: widget({ replicas: 1, maxReplicas: 3, storage: 'a' }), want: ['spec.storage: Invalid value: "string": storage is immutable'] },
    {
      name: 'list-type map items correlate by key',
      obj: widget({ replicas: 1, maxReplicas: 3, ports: [{ name: 'b', port: 1 }, { name: 'a', port: 5 }] }),
      old: widget({ replicas: 1, maxReplicas: 3, ports: [{ name: 'a', port: 8 }] }),
      want: ['spec.ports[1]: Invalid value: "object": ports only grow'],
    },
  ])('$name', ({ obj, old, want }) => {
    expect(rules.validate(obj, old).map((e) => e.toString())).toEqual(want);
  });
});

describe('crdRuleErrors', () => {
  const crd = (schema: JSONSchemaProps): CustomResourceDefinition => ({
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] },
  });
  const at = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]';

  it.each<{ name: string; spec: JSONSchemaProps; want: RegExp[] }>([
    { name: 'valid rules', spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.a > 0' }] }, want: [] },
    { name: 'a rule that does not parse', spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.a >' }] }, want: [new RegExp(`^${escape(at)}\\.rule: Invalid value: "self.a >": compilation failed: ERROR: <input>:1:\\d+:`)] },
    { name: 'a misspelt field', spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.b > 0' }] }, want: [new RegExp(`^${escape(at)}\\.rule: Invalid value: "self.b > 0": compilation failed:`)] },
    { name: 'a rule that is not a bool', spec: { type: 'object', properties: { a: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.a + 1' }] }, want: [/compilation failed: .*must evaluate to bool/] },
    {
      name: 'a rule over an unbounded list costs too much',
      spec: { type: 'object', properties: { l: { type: 'array', items: { type: 'string' } } }, 'x-kubernetes-validations': [{ rule: 'self.l.all(x, self.l.all(y, x == y))' }] },
      want: [new RegExp(`^${escape(at)}\\.rule: Forbidden: estimated rule cost exceeds budget by factor of`)],
    },
    {
      name: 'oldSelf under an atomic list',
      spec: { type: 'object', properties: { l: { type: 'array', items: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } } } },
      want: [/properties\[l\]\.items\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema/],
    },
  ])('$name', ({ spec, want }) => {
    const errs = crdRuleErrors(crd({ type: 'object', properties: { spec } })).map((e) => e.toString());
    expect(errs).toHaveLength(want.length);
    want.forEach((re, i) => expect(errs[i]).toMatch(re));
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
