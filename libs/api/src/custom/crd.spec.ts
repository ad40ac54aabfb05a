import { customResourceDefs, defaultCustomResourceDefinition, validateCustomResourceDefinition, type CustomResourceDefinition } from './crd';

const SCHEMA = { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } }, status: { type: 'object', properties: { replicas: { type: 'integer' } } } } };

function crd(patch: (c: CustomResourceDefinition) => void = () => undefined): CustomResourceDefinition {
  const c: CustomResourceDefinition = {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com', uid: 'u1', generation: 1 },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: structuredClone(SCHEMA) } }],
    },
  };
  patch(c);
  defaultCustomResourceDefinition(c);
  return c;
}

describe('validateCustomResourceDefinition', () => {
  it.each<{ name: string; crd: CustomResourceDefinition; want: string[] }>([
    { name: 'a valid CRD', crd: crd(), want: [] },
    { name: 'scope is required', crd: crd((c) => delete (c.spec as { scope?: string }).scope), want: ['spec.scope: Unsupported value: "": supported values: "Cluster", "Namespaced"'] },
    { name: 'a schema is required', crd: crd((c) => delete c.spec.versions[0].schema), want: ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'] },
    {
      name: 'preserveUnknownFields true is refused',
      crd: crd((c) => (c.spec.preserveUnknownFields = true)),
      want: ['spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'],
    },
    { name: 'the name must be plural.group', crd: crd((c) => (c.metadata.name = 'gadgets.example.com')), want: ['metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group'] },
    { name: 'a group needs a dot', crd: crd((c) => ((c.spec.group = 'example'), (c.metadata.name = 'widgets.example'))), want: ['spec.group: Invalid value: "example": should be a domain with at least one dot'] },
    {
      name: 'a protected group needs approval',
      crd: crd((c) => ((c.spec.group = 'things.orch.io'), (c.metadata.name = 'widgets.things.orch.io'))),
      want: ['metadata.annotations[api-approved.orch.io]: Required value: protected groups must have approval annotation "api-approved.orch.io"'],
    },
    {
      name: 'exactly one storage version',
      crd: crd((c) => c.spec.versions.push({ name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: structuredClone(SCHEMA) } })),
      want: ['spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as storage version'],
    },
    {
      name: 'webhook conversion needs its webhook',
      crd: crd((c) => (c.spec.conversion = { strategy: 'Webhook' })),
      want: ['spec.conversion.webhook: Required value: required when strategy is set to Webhook'],
    },
    {
      name: 'webhook conversion needs review version v1',
      crd: crd((c) => (c.spec.conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://x.example/convert' }, conversionReviewVersions: ['v2'] } })),
      want: ['spec.conversion.webhook.conversionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1'],
    },
    {
      name: 'a scale subresource with a spec path outside .spec',
      crd: crd((c) => (c.spec.versions[0].subresources = { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '.status.replicas' } })),
      want: ['spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec.'],
    },
    {
      name: 'a printer column with an unknown type and a bad path',
      crd: crd((c) => (c.spec.versions[0].additionalPrinterColumns = [{ name: 'R', type: 'float', jsonPath: 'spec.replicas' }])),
      want: [
        'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "float": supported values: "boolean", "date", "integer", "number", "string"',
        'spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "spec.replicas": must be a JSON path starting with "." or "[": "spec.replicas"',
      ],
    },
    {
      name: 'stored versions must stay in spec.versions',
      crd: crd((c) => (c.status = { storedVersions: ['v0'] })),
      want: ['status.storedVersions[0]: Invalid value: "v0": must appear in spec.versions'],
    },
  ])('$name', ({ crd: c, want }) => {
    expect(validateCustomResourceDefinition(c).map((e) => e.toString())).toEqual(want);
  });
});

describe('customResourceDefs', () => {
  it('adds one catalog entry per served version, stored as the storage version', () => {
    const c = crd((x) => {
      x.spec.versions = [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: structuredClone(SCHEMA) }, subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } },
        { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: structuredClone(SCHEMA) } },
        { name: 'v0', served: false, storage: false, schema: { openAPIV3Schema: structuredClone(SCHEMA) } },
      ];
    });
    const defs = customResourceDefs(c);
    expect(defs.map((d) => [d.version, d.kind, d.listKind, d.singular, d.shortNames, d.storage?.version, d.subresources.map((s) => s.name)])).toEqual([
      ['v1', 'Widget', 'WidgetList', 'widget', ['wd'], undefined, ['status', 'scale']],
      ['v2', 'Widget', 'WidgetList', 'widget', ['wd'], 'v1', []],
    ]);
    expect(defs[0].custom?.versions).toEqual(['v1', 'v2', 'v0']);
  });
});
