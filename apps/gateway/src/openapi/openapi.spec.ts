import { Catalog, type ResourceDef } from '@orch/api';
import { StatusError } from '@orch/apimachinery';
import { hashOf, OpenApiV3, type RemoteDocument } from './service';

type Json = Record<string, any>;

const none = new URLSearchParams();

function get(svc: OpenApiV3, path: string, headers: { accept?: string; ifNoneMatch?: string } = {}, query = none) {
  const r = svc.serve(path, query, headers);
  if (!r) throw new Error(`${path} not served`);
  return { ...r, json: r.body.length ? (JSON.parse(r.body.toString()) as Json) : undefined };
}

const svc = new OpenApiV3(new Catalog());
const core = get(svc, '/openapi/v3/api/v1').json!;
const apps = get(svc, '/openapi/v3/apis/apps/v1').json!;
const authz = get(svc, '/openapi/v3/apis/authorization.orch.io/v1').json!;
const schema = (doc: Json, name: string): Json => doc.components.schemas[name];
const prop = (doc: Json, type: string, field: string): Json => schema(doc, type).properties[field];

describe('components.schemas', () => {
  it.each([
    { name: 'root kind carries its GVK', got: () => schema(apps, 'io.orch.api.apps.v1.Deployment')['x-kubernetes-group-version-kind'], want: [{ group: 'apps', kind: 'Deployment', version: 'v1' }] },
    { name: 'list kind carries its GVK', got: () => schema(apps, 'io.orch.api.apps.v1.DeploymentList')['x-kubernetes-group-version-kind'], want: [{ group: 'apps', kind: 'DeploymentList', version: 'v1' }] },
    { name: 'subresource kind of another group', got: () => schema(apps, 'io.orch.api.autoscaling.v1.Scale')['x-kubernetes-group-version-kind'], want: [{ group: 'autoscaling', kind: 'Scale', version: 'v1' }] },
    {
      name: 'list-map with patch merge key',
      got: () => prop(core, 'io.orch.api.core.v1.PodSpec', 'containers'),
      want: {
        type: 'array',
        items: { $ref: '#/components/schemas/io.orch.api.core.v1.Container' },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        'x-kubernetes-patch-merge-key': 'name',
        'x-kubernetes-patch-strategy': 'merge',
      },
    },
    { name: 'reference with a patch strategy is wrapped in allOf', got: () => prop(apps, 'io.orch.api.apps.v1.DeploymentSpec', 'strategy'), want: { allOf: [{ $ref: '#/components/schemas/io.orch.api.apps.v1.DeploymentStrategy' }], 'x-kubernetes-patch-strategy': 'retainKeys' } },
    { name: 'atomic struct', got: () => schema(core, 'io.orch.apimachinery.pkg.apis.meta.v1.LabelSelector')['x-kubernetes-map-type'], want: 'atomic' },
    { name: 'enum', got: () => prop(apps, 'io.orch.api.apps.v1.DeploymentStrategy', 'type').enum, want: ['Recreate', 'RollingUpdate'] },
    { name: 'default and enum', got: () => prop(core, 'io.orch.api.core.v1.ContainerPort', 'protocol'), want: { type: 'string', enum: ['TCP', 'UDP', 'SCTP'], default: 'TCP' } },
    { name: 'required fields', got: () => schema(core, 'io.orch.api.core.v1.ContainerPort').required, want: ['containerPort'] },
    { name: 'int32', got: () => prop(core, 'io.orch.api.core.v1.ContainerPort', 'containerPort'), want: { type: 'integer', format: 'int32' } },
    { name: 'int64', got: () => prop(core, 'io.orch.api.core.v1.PodSpec', 'activeDeadlineSeconds'), want: { type: 'integer', format: 'int64' } },
    { name: 'bytes', got: () => prop(core, 'io.orch.api.core.v1.Secret', 'data'), want: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } } },
    { name: 'time', got: () => schema(core, 'io.orch.apimachinery.pkg.apis.meta.v1.Time'), want: { type: 'string', format: 'date-time' } },
    { name: 'time field refers to Time', got: () => prop(core, 'io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'creationTimestamp'), want: { $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.Time' } },
    { name: 'int-or-string', got: () => schema(apps, 'io.orch.apimachinery.pkg.util.intstr.IntOrString'), want: { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true } },
    { name: 'quantity', got: () => schema(core, 'io.orch.apimachinery.pkg.api.resource.Quantity'), want: { oneOf: [{ type: 'string' }, { type: 'number' }] } },
    { name: 'map of quantities', got: () => prop(core, 'io.orch.api.core.v1.ResourceRequirements', 'limits'), want: { type: 'object', additionalProperties: { $ref: '#/components/schemas/io.orch.apimachinery.pkg.api.resource.Quantity' } } },
    { name: 'managed fields refer to FieldsV1', got: () => prop(core, 'io.orch.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry', 'fieldsV1'), want: { $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.FieldsV1' } },
    { name: 'TypeMeta fields of a kind', got: () => prop(apps, 'io.orch.api.apps.v1.Deployment', 'apiVersion'), want: { type: 'string' } },
  ])('$name', ({ got, want }) => {
    expect(got()).toEqual(want);
  });

  it.each([
    { name: 'core/v1', doc: core },
    { name: 'apps/v1', doc: apps },
    { name: 'authorization/v1', doc: authz },
  ])('every $ref of $name resolves inside the document', ({ doc }) => {
    const refs = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref') refs.add(String(x));
          else walk(x);
        }
      }
    };
    walk(doc);
    const missing = [...refs].filter((r) => !doc.components.schemas[r.replace('#/components/schemas/', '')]);
    expect(missing).toEqual([]);
  });

  it('has no prose descriptions in schemas', () => {
    expect(JSON.stringify(core.components.schemas)).not.toContain('"description"');
  });
});

describe('paths', () => {
  const ops = (doc: Json, path: string): string[] => Object.keys(doc.paths[path] ?? {}).filter((k) => k !== 'parameters');
  it.each([
    { name: 'namespaced collection', doc: core, path: '/api/v1/namespaces/{namespace}/pods', want: ['get', 'post', 'delete'] },
    { name: 'namespaced item', doc: core, path: '/api/v1/namespaces/{namespace}/pods/{name}', want: ['get', 'put', 'patch', 'delete'] },
    { name: 'all namespaces list', doc: core, path: '/api/v1/pods', want: ['get'] },
    { name: 'cluster-scoped collection (no deletecollection verb)', doc: core, path: '/api/v1/namespaces', want: ['get', 'post'] },
    { name: 'cluster-scoped item', doc: core, path: '/api/v1/namespaces/{name}', want: ['get', 'put', 'patch', 'delete'] },
    { name: 'status subresource', doc: core, path: '/api/v1/namespaces/{namespace}/pods/{name}/status', want: ['get', 'put', 'patch'] },
    { name: 'eviction subresource', doc: core, path: '/api/v1/namespaces/{namespace}/pods/{name}/eviction', want: ['post'] },
    { name: 'proxy subresource connects', doc: core, path: '/api/v1/nodes/{name}/proxy', want: ['post', 'delete', 'get', 'patch', 'put'] },
    { name: 'scale subresource', doc: apps, path: '/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale', want: ['get', 'put', 'patch'] },
    { name: 'watch list', doc: apps, path: '/apis/apps/v1/watch/namespaces/{namespace}/deployments', want: ['get'] },
    { name: 'virtual review is create-only', doc: authz, path: '/apis/authorization.orch.io/v1/selfsubjectaccessreviews', want: ['post'] },
    { name: 'resource list of the group/version', doc: apps, path: '/apis/apps/v1/', want: ['get'] },
  ])('$name', ({ doc, path, want }) => {
    expect(ops(doc, path).sort()).toEqual([...want].sort());
  });

  it.each([
    { name: 'patch', op: () => apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch, action: 'patch', params: ['dryRun', 'fieldManager', 'fieldValidation', 'force'], gvk: { group: 'apps', version: 'v1', kind: 'Deployment' } },
    { name: 'create', op: () => apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments'].post, action: 'post', params: ['dryRun', 'fieldManager', 'fieldValidation'], gvk: { group: 'apps', version: 'v1', kind: 'Deployment' } },
    { name: 'replace', op: () => apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].put, action: 'put', params: ['dryRun', 'fieldManager', 'fieldValidation'], gvk: { group: 'apps', version: 'v1', kind: 'Deployment' } },
    { name: 'list', op: () => apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments'].get, action: 'list', params: ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'], gvk: { group: 'apps', version: 'v1', kind: 'Deployment' } },
    { name: 'scale patch', op: () => apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'].patch, action: 'patch', params: ['dryRun', 'fieldManager', 'fieldValidation', 'force'], gvk: { group: 'autoscaling', version: 'v1', kind: 'Scale' } },
    { name: 'delete', op: () => core.paths['/api/v1/namespaces/{namespace}/pods/{name}'].delete, action: 'delete', params: ['dryRun', 'gracePeriodSeconds', 'ignoreStoreReadErrorWithClusterBreakingPotential', 'orphanDependents', 'propagationPolicy'], gvk: { group: '', version: 'v1', kind: 'Pod' } },
  ])('$name operation: action, GVK object, query parameters', ({ op, action, params, gvk }) => {
    const o = op();
    expect(o['x-kubernetes-action']).toBe(action);
    expect(o['x-kubernetes-group-version-kind']).toEqual(gvk);
    expect(o.parameters.map((p: Json) => p.name).sort()).toEqual([...params].sort());
    expect(o.parameters.every((p: Json) => p.in === 'query')).toBe(true);
  });

  it('responses name the kind and offer protobuf for built-in kinds', () => {
    const content = apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].get.responses['200'].content;
    expect(Object.keys(content)).toEqual(['application/json', 'application/yaml', 'application/vnd.orch.protobuf']);
    expect(content['application/json'].schema).toEqual({ $ref: '#/components/schemas/io.orch.api.apps.v1.Deployment' });
  });

  it('operation ids are unique', () => {
    for (const doc of [core, apps, authz]) {
      const ids = Object.values(doc.paths as Json).flatMap((item: Json) => Object.entries(item).filter(([k]) => k !== 'parameters').map(([, op]) => (op as Json).operationId));
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});

describe('publishing', () => {
  it('the index points at every served group/version with the document hash', () => {
    const index = get(svc, '/openapi/v3');
    const paths = index.json!.paths as Record<string, { serverRelativeURL: string }>;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['api/v1', 'apis/apps/v1', 'apis/authorization.orch.io/v1', 'apis/rbac.authorization.orch.io/v1']));
    const doc = get(svc, '/openapi/v3/apis/apps/v1');
    expect(paths['apis/apps/v1'].serverRelativeURL).toBe(`/openapi/v3/apis/apps/v1?hash=${JSON.parse(doc.headers.etag)}`);
  });

  // Compatibility option: stock manifests (`rbac.authorization.k8s.io/v1`) validate against these.
  it('publishes every *.orch.io group version again under its *.k8s.io name, and only under the option', () => {
    const aliasKeys = (s: OpenApiV3) => Object.keys(get(s, '/openapi/v3').json!.paths).filter((k) => k.includes('.k8s.io'));
    expect(aliasKeys(svc)).toEqual(expect.arrayContaining(['apis/rbac.authorization.k8s.io/v1', 'apis/networking.k8s.io/v1', 'apis/apiextensions.k8s.io/v1', 'apis/flowcontrol.apiserver.k8s.io/v1']));
    expect(aliasKeys(svc).every((k) => get(svc, '/openapi/v3').json!.paths[k.replace('.k8s.io', '.orch.io')])).toBe(true);
    expect(aliasKeys(new OpenApiV3(new Catalog(), { k8sAliases: false }))).toEqual([]);
  });

  it('an alias document names its own group in paths, operations and schema group-version-kinds', () => {
    const rbac = get(svc, '/openapi/v3/apis/rbac.authorization.k8s.io/v1').json!;
    const item = rbac.paths['/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}'];
    expect(item.patch['x-kubernetes-group-version-kind']).toEqual({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role' });
    expect(item.patch.parameters.map((p: Json) => p.name)).toContain('fieldValidation');
    expect(item.patch.operationId).toBe('patchRbacAuthorizationV1NamespacedRole');
    expect(schema(rbac, 'io.orch.api.rbac.v1.Role')['x-kubernetes-group-version-kind']).toEqual([{ group: 'rbac.authorization.k8s.io', kind: 'Role', version: 'v1' }]);
    expect(Object.keys(rbac.paths).every((p) => p.startsWith('/apis/rbac.authorization.k8s.io/v1/'))).toBe(true);
  });

  it.each([
    { name: 'no hash: revalidate', query: '', headers: {}, status: 200, cache: 'no-cache, private' },
    { name: 'current hash: immutable', query: 'hash=CURRENT', headers: {}, status: 200, cache: 'public, immutable' },
    { name: 'stale hash: redirect', query: 'hash=0BAD', headers: {}, status: 301, cache: undefined },
    { name: 'If-None-Match: not modified', query: '', headers: { ifNoneMatch: 'W/"CURRENT"' }, status: 304, cache: 'no-cache, private' },
    { name: 'If-None-Match of another version', query: '', headers: { ifNoneMatch: '"OTHER"' }, status: 200, cache: 'no-cache, private' },
  ])('$name', ({ query, headers, status, cache }) => {
    const hash = JSON.parse(get(svc, '/openapi/v3/apis/apps/v1').headers.etag) as string;
    const q = new URLSearchParams(query.replace('CURRENT', hash));
    const r = get(svc, '/openapi/v3/apis/apps/v1', { ...headers, ifNoneMatch: headers.ifNoneMatch?.replace('CURRENT', hash) }, q);
    expect(r.status).toBe(status);
    expect(r.headers['cache-control']).toBe(cache);
    if (status === 301) expect(r.headers.location).toBe(`/openapi/v3/apis/apps/v1?hash=${hash}`);
  });

  it.each([
    { name: 'v2', path: '/openapi/v2' },
    { name: 'unknown group/version', path: '/openapi/v3/apis/nope/v1' },
    { name: 'another path', path: '/openapi/v3x' },
  ])('does not serve $name', ({ path }) => {
    expect(svc.serve(path, none, {})).toBeUndefined();
  });

  it('answers 406 when JSON is not acceptable', () => {
    expect(() => svc.serve('/openapi/v3/api/v1', none, { accept: 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf' })).toThrow(StatusError);
  });

  it('builds once per catalog state and rebuilds for a custom resource', () => {
    const catalog = new Catalog();
    const s = new OpenApiV3(catalog);
    const before = get(s, '/openapi/v3/apis/apps/v1');
    expect(get(s, '/openapi/v3/apis/apps/v1').body).toBe(before.body);
    const widget: ResourceDef = {
      group: 'example.com',
      version: 'v1',
      resource: 'widgets',
      kind: 'Widget',
      listKind: 'WidgetList',
      singular: 'widget',
      shortNames: [],
      scope: 'Namespaced',
      verbs: ['get', 'list', 'create', 'update', 'patch', 'delete', 'deletecollection', 'watch'],
      subresources: [{ name: 'status', kind: 'Widget', verbs: ['get', 'patch', 'update'] }],
      categories: [],
      enabledByDefault: true,
      virtual: false,
    };
    catalog.register(widget);
    // A CRD group that starts like a built-in one does not borrow a built-in schema.
    catalog.register({ ...widget, group: 'apps.example.com', resource: 'deployments', kind: 'Deployment', listKind: 'DeploymentList' });
    expect(get(s, '/openapi/v3/apis/apps.example.com/v1').json!.components.schemas['com.example.apps.v1.Deployment']['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(get(s, '/openapi/v3').json!.paths['apis/example.com/v1']).toBeDefined();
    const doc = get(s, '/openapi/v3/apis/example.com/v1').json!;
    expect(doc.components.schemas['com.example.v1.Widget']).toEqual({
      type: 'object',
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta' } },
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-group-version-kind': [{ group: 'example.com', kind: 'Widget', version: 'v1' }],
    });
    expect(doc.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}'].patch.parameters.map((p: Json) => p.name)).toContain('fieldValidation');
    expect(Object.keys(doc.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}'].get.responses['200'].content)).toEqual(['application/json', 'application/yaml']);
    // Other documents are unchanged (same bytes, same hash).
    expect(get(s, '/openapi/v3/apis/apps/v1').body.equals(before.body)).toBe(true);
  });
});

describe('documents of aggregated APIs (fetched from extension servers)', () => {
  const doc = (title: string) => Buffer.from(JSON.stringify({ openapi: '3.0.0', info: { title }, paths: {}, components: { schemas: {} } }));
  let remote: RemoteDocument[] = [];
  const s = new OpenApiV3(new Catalog(), { k8sAliases: true, remoteDocuments: () => remote });

  it('lists each in the index under its hash and serves it as fetched; a new fetch changes the hash', () => {
    remote = [{ key: 'apis/stream.example.com/v1', body: doc('first'), hash: hashOf(doc('first')) }];
    const first = get(s, '/openapi/v3').json!.paths['apis/stream.example.com/v1'];
    expect(first).toEqual({ serverRelativeURL: `/openapi/v3/apis/stream.example.com/v1?hash=${hashOf(doc('first'))}` });
    expect(get(s, '/openapi/v3/apis/stream.example.com/v1').json!.info.title).toBe('first');
    remote = [{ key: 'apis/stream.example.com/v1', body: doc('second'), hash: hashOf(doc('second')) }];
    expect(get(s, '/openapi/v3').json!.paths['apis/stream.example.com/v1'].serverRelativeURL).not.toBe(first.serverRelativeURL);
    expect(get(s, '/openapi/v3/apis/stream.example.com/v1').json!.info.title).toBe('second');
  });

  it('never replaces a local group version, and leaves the index when the extension does', () => {
    const local = get(s, '/openapi/v3/apis/apps/v1').body;
    remote = [{ key: 'apis/apps/v1', body: doc('intruder'), hash: hashOf(doc('intruder')) }];
    expect(get(s, '/openapi/v3/apis/apps/v1').body.equals(local)).toBe(true);
    remote = [];
    expect(get(s, '/openapi/v3').json!.paths['apis/stream.example.com/v1']).toBeUndefined();
    expect(s.serve('/openapi/v3/apis/stream.example.com/v1', none, {})).toBeUndefined();
  });
});
