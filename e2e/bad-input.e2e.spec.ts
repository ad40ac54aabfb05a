import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import tls from 'node:tls';
import { startGateway, type GatewayProcess } from './support/gateway';
import { kubectlSync } from './support/kubectl';

/** Sends raw bytes over TLS (what no HTTP client library would send) and reads the answer to the end. */
async function rawRequest(gw: GatewayProcess, request: string): Promise<string> {
  const pki = join(gw.dataDir, 'pki');
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f))));
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: gw.port, ca, cert, key }, () => socket.write(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('end', () => resolve(answer));
    socket.on('error', (err) => (answer ? resolve(answer) : reject(err)));
  });
}

interface Row {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  want: { code: number; reason?: string; message?: RegExp };
}

const CM = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ok' } };
const CMS = '/api/v1/namespaces/default/configmaps';
const FLOWSCHEMAS = '/apis/flowcontrol.apiserver.orch.io/v1/flowschemas';
const ROLES = '/apis/rbac.authorization.orch.io/v1/namespaces/default/roles';
const ROLEBINDINGS = '/apis/rbac.authorization.orch.io/v1/namespaces/default/rolebindings';
const CLUSTERROLEBINDINGS = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
const LEVELS = '/apis/flowcontrol.apiserver.orch.io/v1/prioritylevelconfigurations';
const rb = (o: Record<string, unknown>) => ({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'rb' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'r' }, ...o });
const crb = (o: Record<string, unknown>) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'crb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, ...o });
const plc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name }, spec });
const queued = (queuing: Record<string, unknown>) => ({ type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Queue', queuing } } });

/**
 * Every row gets the right code and a Status naming the problem, and the server keeps
 * serving (checked after the table).
 */
const ROWS: Row[] = [
  // bodies
  { name: 'malformed JSON', method: 'POST', path: CMS, body: '{"apiVersion": "v1", "kind": ', want: { code: 400, reason: 'BadRequest', message: /json|JSON|unexpected|Unexpected/ } },
  { name: 'body is an array', method: 'POST', path: CMS, body: '[1,2]', want: { code: 400, reason: 'BadRequest' } },
  { name: 'empty body', method: 'POST', path: CMS, body: '', want: { code: 400, reason: 'BadRequest' } },
  { name: 'metadata.name wrong type', method: 'POST', path: CMS, body: { ...CM, metadata: { name: 5 } }, want: { code: 400, reason: 'BadRequest', message: /metadata\.name/ } },
  { name: 'metadata wrong type', method: 'POST', path: CMS, body: { ...CM, metadata: 'x' }, want: { code: 400, reason: 'BadRequest', message: /metadata/ } },
  { name: 'labels wrong type', method: 'POST', path: CMS, body: { ...CM, metadata: { name: 'l', labels: ['a'] } }, want: { code: 400, reason: 'BadRequest', message: /metadata\.labels/ } },
  { name: 'wrong apiVersion for the resource', method: 'POST', path: CMS, body: { ...CM, apiVersion: 'apps/v1' }, want: { code: 400, reason: 'BadRequest', message: /API version in the data \(apps\/v1\)/ } },
  { name: 'data value of the wrong type', method: 'POST', path: CMS, body: { ...CM, data: { a: 1 } }, want: { code: 400, reason: 'BadRequest', message: /cannot unmarshal number/ } },
  { name: 'spec field of the wrong type', method: 'POST', path: '/apis/apps/v1/namespaces/default/deployments', body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 'three' } }, want: { code: 400, reason: 'BadRequest', message: /spec\.replicas/ } },
  { name: 'strict: unknown and duplicate fields named', method: 'POST', path: `${CMS}?fieldValidation=Strict`, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s","name":"t"},"bogus":1}', want: { code: 400, reason: 'BadRequest', message: /strict decoding error: duplicate field "metadata.name", unknown field "bogus"/ } },
  { name: 'bad fieldValidation', method: 'POST', path: `${CMS}?fieldValidation=Loud`, body: CM, want: { code: 400, reason: 'BadRequest', message: /fieldValidation/ } },
  { name: 'wrong kind for the resource', method: 'POST', path: CMS, body: { ...CM, kind: 'Secret' }, want: { code: 400, reason: 'BadRequest', message: /kind/ } },
  { name: 'unsupported content type', method: 'POST', path: CMS, body: 'x', headers: { 'content-type': 'text/csv' }, want: { code: 415, reason: 'UnsupportedMediaType' } },
  { name: 'body over 3 MiB', method: 'POST', path: CMS, body: { ...CM, data: { big: 'x'.repeat(3 * 1024 * 1024 + 10) } }, want: { code: 413, reason: 'RequestEntityTooLarge' } },
  // subresource, virtual and DeleteOptions bodies go through the same decoder
  { name: 'status body field of the wrong type', method: 'PUT', path: '/api/v1/namespaces/default/pods/missing/status', body: { kind: 'Pod', metadata: { name: 'missing' }, status: { phase: 5 } }, want: { code: 400, reason: 'BadRequest', message: /status\.phase/ } },
  { name: 'scale body field of the wrong type', method: 'PUT', path: '/apis/apps/v1/namespaces/default/deployments/missing/scale', body: { kind: 'Scale', spec: { replicas: 'many' } }, want: { code: 400, reason: 'BadRequest', message: /spec\.replicas/ } },
  { name: 'strict: unknown field in an eviction', method: 'POST', path: '/api/v1/namespaces/default/pods/missing/eviction?fieldValidation=Strict', body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'missing' }, bogus: 1 }, want: { code: 400, reason: 'BadRequest', message: /unknown field "bogus"/ } },
  { name: 'eviction body of another kind', method: 'POST', path: '/api/v1/namespaces/default/pods/missing/eviction', body: { apiVersion: 'policy/v1', kind: 'Pod' }, want: { code: 400, reason: 'BadRequest', message: /expected kind \(Eviction\)/ } },
  { name: 'strict: duplicate field in a binding', method: 'POST', path: '/api/v1/namespaces/default/bindings?fieldValidation=Strict', body: '{"kind":"Binding","metadata":{"name":"p"},"target":{"name":"n","name":"m"}}', want: { code: 400, reason: 'BadRequest', message: /duplicate field "target.name"/ } },
  { name: 'access review field of the wrong type', method: 'POST', path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body: { kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 5 } } }, want: { code: 400, reason: 'BadRequest', message: /spec\.resourceAttributes\.verb/ } },
  { name: 'DeleteOptions field of the wrong type', method: 'DELETE', path: `${CMS}/missing`, body: { kind: 'DeleteOptions', gracePeriodSeconds: 'soon' }, want: { code: 400, reason: 'BadRequest', message: /gracePeriodSeconds/ } },
  // names
  { name: 'invalid name', method: 'POST', path: CMS, body: { ...CM, metadata: { name: 'Bad_Name' } }, want: { code: 422, reason: 'Invalid', message: /metadata\.name: Invalid value: "Bad_Name"/ } },
  { name: 'over-long name', method: 'POST', path: CMS, body: { ...CM, metadata: { name: 'a'.repeat(254) } }, want: { code: 422, reason: 'Invalid', message: /metadata\.name/ } },
  { name: 'no name and no generateName', method: 'POST', path: CMS, body: { ...CM, metadata: {} }, want: { code: 422, reason: 'Invalid', message: /metadata\.name: Required value/ } },
  { name: 'namespace name not a DNS label', method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } }, want: { code: 422, reason: 'Invalid' } },
  { name: 'service name not a DNS-1035 label', method: 'POST', path: '/api/v1/namespaces/default/services', body: { apiVersion: 'v1', kind: 'Service', metadata: { name: '1svc' }, spec: {} }, want: { code: 422, reason: 'Invalid' } },
  { name: 'invalid label value', method: 'POST', path: CMS, body: { ...CM, metadata: { name: 'lv', labels: { a: 'bad value' } } }, want: { code: 422, reason: 'Invalid', message: /metadata\.labels/ } },
  // namespaces and paths
  { name: 'URL/body namespace mismatch', method: 'POST', path: CMS, body: { ...CM, metadata: { name: 'x', namespace: 'other' } }, want: { code: 400, reason: 'BadRequest', message: /does not match the namespace/ } },
  { name: 'URL/body name mismatch on PUT', method: 'PUT', path: `${CMS}/one`, body: { ...CM, metadata: { name: 'two' } }, want: { code: 400, reason: 'BadRequest', message: /does not match the name on the URL/ } },
  { name: 'unknown resource', method: 'GET', path: '/api/v1/foos', want: { code: 404, reason: 'NotFound' } },
  { name: 'unknown group', method: 'GET', path: '/apis/nosuch.orch.io/v1/things', want: { code: 404, reason: 'NotFound' } },
  { name: 'unknown version', method: 'GET', path: '/apis/apps/v7/deployments', want: { code: 404, reason: 'NotFound' } },
  { name: 'missing object', method: 'GET', path: `${CMS}/missing`, want: { code: 404, reason: 'NotFound', message: /configmaps "missing" not found/ } },
  { name: 'verb the resource lacks (deletecollection on namespaces)', method: 'DELETE', path: '/api/v1/namespaces', want: { code: 405, reason: 'MethodNotAllowed' } },
  { name: 'verb the resource lacks (get on bindings)', method: 'GET', path: '/api/v1/namespaces/default/bindings', want: { code: 405, reason: 'MethodNotAllowed' } },
  { name: 'unsupported patch type', method: 'PATCH', path: `${CMS}/missing`, body: {}, headers: { 'content-type': 'application/x-unknown' }, want: { code: 415, reason: 'UnsupportedMediaType' } },
  // selectors and list parameters
  { name: 'invalid label selector', method: 'GET', path: `${CMS}?labelSelector=${encodeURIComponent('a in (')}`, want: { code: 400, reason: 'BadRequest', message: /a in \(/ } },
  { name: 'invalid label key', method: 'GET', path: `${CMS}?labelSelector=${encodeURIComponent('-bad=1')}`, want: { code: 400, reason: 'BadRequest' } },
  // Selectors are bounded as upstream's are: per requirement (keys are qualified names, values label values of at most 63 characters), and as a whole by the request line (below).
  { name: 'label selector value of 64 characters', method: 'GET', path: `${CMS}?labelSelector=${encodeURIComponent(`app in (web,${'v'.repeat(64)})`)}`, want: { code: 400, reason: 'BadRequest', message: /unable to parse requirement: values\[0\]\[app\]: Invalid value: "v{64}": must be no more than 63 characters/ } },
  { name: 'label selector key of 64 characters', method: 'GET', path: `${CMS}?labelSelector=${encodeURIComponent(`${'k'.repeat(64)}=v`)}`, want: { code: 400, reason: 'BadRequest', message: /unable to parse requirement: .*name part must be no more than 63 characters/ } },
  { name: 'unsupported field selector', method: 'GET', path: `${CMS}?fieldSelector=spec.foo%3Dx`, want: { code: 400, reason: 'BadRequest', message: /field label not supported: spec\.foo/ } },
  { name: 'malformed field selector', method: 'GET', path: `${CMS}?fieldSelector=novalue`, want: { code: 400, reason: 'BadRequest' } },
  { name: 'negative limit', method: 'GET', path: `${CMS}?limit=-1`, want: { code: 400, reason: 'BadRequest', message: /limit/ } },
  { name: 'non-numeric limit', method: 'GET', path: `${CMS}?limit=ten`, want: { code: 400, reason: 'BadRequest', message: /limit/ } },
  { name: 'garbage continue token', method: 'GET', path: `${CMS}?limit=1&continue=garbage`, want: { code: 400, reason: 'BadRequest', message: /continue/ } },
  { name: 'continue with resourceVersion', method: 'GET', path: `${CMS}?limit=1&continue=abc&resourceVersion=5`, want: { code: 400, reason: 'BadRequest' } },
  { name: 'non-numeric resourceVersion', method: 'GET', path: `${CMS}?resourceVersion=abc`, want: { code: 400, reason: 'BadRequest', message: /resourceVersion/ } },
  { name: 'resourceVersionMatch without resourceVersion', method: 'GET', path: `${CMS}?resourceVersionMatch=Exact`, want: { code: 400, reason: 'BadRequest' } },
  { name: 'bad resourceVersionMatch', method: 'GET', path: `${CMS}?resourceVersion=1&resourceVersionMatch=Sometimes`, want: { code: 422, reason: 'Invalid' } },
  { name: 'bad dryRun', method: 'POST', path: `${CMS}?dryRun=Some`, body: CM, want: { code: 400, reason: 'BadRequest', message: /dryRun/ } },
  { name: 'bad propagationPolicy', method: 'DELETE', path: `${CMS}/x?propagationPolicy=Sideways`, want: { code: 422, reason: 'Invalid', message: /propagationPolicy/ } },
  { name: 'not acceptable', method: 'GET', path: CMS, headers: { accept: 'text/html' }, want: { code: 406, reason: 'NotAcceptable' } },
  // Found by the fuzz suite (e2e/fuzz): each answered 500, dropped the connection or answered a non-Status before.
  { name: 'GET configmaps?limit=99999999999999999999', method: 'GET', path: `${CMS}?limit=99999999999999999999`, want: { code: 400, reason: 'BadRequest', message: /invalid limit: "99999999999999999999": must be a non-negative 64-bit integer/ } },
  { name: 'POST services/s (a single object path)', method: 'POST', path: '/api/v1/namespaces/default/services/s', body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } }, want: { code: 405, reason: 'MethodNotAllowed' } },
  { name: 'POST roles with a null rule', method: 'POST', path: ROLES, body: { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [null] }, want: { code: 422, reason: 'Invalid', message: /rules\[0\]\.verbs: Required value/ } },
  { name: 'POST roles with a rule without resources', method: 'POST', path: ROLES, body: { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [{ verbs: ['get'], apiGroups: [''] }] }, want: { code: 422, reason: 'Invalid', message: /rules\[0\]\.resources: Required value/ } },
  { name: 'POST jobs with spec: null', method: 'POST', path: '/apis/batch/v1/namespaces/default/jobs', body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: null }, want: { code: 422, reason: 'Invalid', message: /spec\.template\.spec\.containers: Required value/ } },
  { name: 'POST nodes with a null taint', method: 'POST', path: '/api/v1/nodes', body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, spec: { taints: [null] } }, want: { code: 422, reason: 'Invalid', message: /spec\.taints\[0\]\.key: Required value/ } },
  { name: 'POST nodes with a taint of an unknown effect', method: 'POST', path: '/api/v1/nodes', body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, spec: { taints: [{ key: 'a', effect: 'Sometimes' }] } }, want: { code: 422, reason: 'Invalid', message: /spec\.taints\[0\]\.effect: Unsupported value/ } },
  // A FlowSchema without a priority level was stored, then every request classified past it answered 500 (fuzz seed 777001).
  { name: 'POST flowschemas without spec.priorityLevelConfiguration', method: 'POST', path: FLOWSCHEMAS, body: { apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'FlowSchema', metadata: { name: 'f' }, spec: { matchingPrecedence: 10 } }, want: { code: 422, reason: 'Invalid', message: /spec\.priorityLevelConfiguration\.name: Required value/ } },
  { name: 'POST flowschemas with a User subject without user', method: 'POST', path: FLOWSCHEMAS, body: { apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'FlowSchema', metadata: { name: 'f' }, spec: { priorityLevelConfiguration: { name: 'global-default' }, rules: [{ subjects: [{ kind: 'User' }] }] } }, want: { code: 422, reason: 'Invalid', message: /spec\.rules\[0\]\.subjects\[0\]\.user\.name: Required value/ } },
  { name: 'POST rolebindings without roleRef', method: 'POST', path: ROLEBINDINGS, body: rb({ roleRef: undefined }), want: { code: 422, reason: 'Invalid', message: /roleRef\.kind: Unsupported value: "": supported values: "Role", "ClusterRole"/ } },
  { name: 'POST rolebindings with a roleRef of another group', method: 'POST', path: ROLEBINDINGS, body: rb({ roleRef: { apiGroup: 'apps', kind: 'Role', name: 'r' } }), want: { code: 422, reason: 'Invalid', message: /roleRef\.apiGroup: Unsupported value: "apps"/ } },
  { name: 'POST rolebindings with a subject of an unknown kind', method: 'POST', path: ROLEBINDINGS, body: rb({ subjects: [{ kind: 'Robot', name: 'r2' }] }), want: { code: 422, reason: 'Invalid', message: /subjects\[0\]\.kind: Unsupported value: "Robot"/ } },
  { name: 'POST rolebindings with a ServiceAccount subject of the RBAC group', method: 'POST', path: ROLEBINDINGS, body: rb({ subjects: [{ kind: 'ServiceAccount', apiGroup: 'rbac.authorization.orch.io', name: 'sa' }] }), want: { code: 422, reason: 'Invalid', message: /subjects\[0\]\.apiGroup: Unsupported value/ } },
  { name: 'POST clusterrolebindings (k8s.io) to a Role', method: 'POST', path: CLUSTERROLEBINDINGS, body: crb({ roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } }), want: { code: 422, reason: 'Invalid', message: /roleRef\.kind: Unsupported value: "Role": supported values: "ClusterRole"/ } },
  { name: 'POST clusterrolebindings (k8s.io) with a ServiceAccount without namespace', method: 'POST', path: CLUSTERROLEBINDINGS, body: crb({ subjects: [{ kind: 'ServiceAccount', name: 'sa' }] }), want: { code: 422, reason: 'Invalid', message: /subjects\[0\]\.namespace: Required value/ } },
  { name: 'POST prioritylevelconfigurations of type Exempt', method: 'POST', path: LEVELS, body: plc('p', { type: 'Exempt' }), want: { code: 422, reason: 'Invalid', message: /spec\.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'/ } },
  { name: 'POST prioritylevelconfigurations with lendablePercent 101', method: 'POST', path: LEVELS, body: plc('p', { type: 'Limited', limited: { lendablePercent: 101, limitResponse: { type: 'Reject' } } }), want: { code: 422, reason: 'Invalid', message: /spec\.limited\.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive/ } },
  { name: 'POST prioritylevelconfigurations with handSize over queues', method: 'POST', path: LEVELS, body: plc('p', queued({ queues: 4, handSize: 5 })), want: { code: 422, reason: 'Invalid', message: /spec\.limited\.limitResponse\.queuing\.handSize: Invalid value: 5: should not be greater than queues \(4\)/ } },
  { name: 'POST prioritylevelconfigurations with a hand needing 63 hash bits', method: 'POST', path: LEVELS, body: plc('p', queued({ queues: 128, handSize: 9 })), want: { code: 422, reason: 'Invalid', message: /handSize: Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater than 60/ } },
  { name: 'POST prioritylevelconfigurations with queueLengthLimit -1', method: 'POST', path: LEVELS, body: plc('p', queued({ queueLengthLimit: -1 })), want: { code: 422, reason: 'Invalid', message: /queuing\.queueLengthLimit: Invalid value: -1: must be positive/ } },
  { name: 'PUT prioritylevelconfigurations/catch-all with queuing', method: 'PUT', path: `${LEVELS}/catch-all`, body: plc('catch-all', queued({})), want: { code: 422, reason: 'Invalid', message: /spec: Invalid value: .*spec of 'catch-all' must equal the fixed value/ } },
  { name: 'PROPFIND configmaps', method: 'PROPFIND', path: CMS, want: { code: 405, reason: 'MethodNotAllowed', message: /PROPFIND/ } },
  { name: 'PROPFIND leases/% (unknown method, malformed URL)', method: 'PROPFIND', path: '/apis/coordination.orch.io/v1/namespaces/default/leases/%', want: { code: 400, reason: 'BadRequest', message: /the URL is not valid/ } },
  { name: 'TRACE / (a method the API does not serve)', method: 'TRACE', path: '/', want: { code: 405, reason: 'MethodNotAllowed', message: /TRACE/ } },
  // The gateway answers on the Content-Length and closes while the client is still writing.
  { name: 'POST configmaps with a 30 MiB body (413 read, no EPIPE)', method: 'POST', path: CMS, body: Buffer.alloc(30 * 1024 * 1024, 'x'), want: { code: 413, reason: 'RequestEntityTooLarge' } },
  { name: 'GET configmaps/%ZZ (malformed percent-encoding)', method: 'GET', path: `${CMS}/%ZZ`, want: { code: 400, reason: 'BadRequest', message: /the URL is not valid/ } },
  { name: 'PATCH configmaps/x (apply, YAML nested 100,000 deep)', method: 'PATCH', path: `${CMS}/x?fieldManager=t`, body: '- '.repeat(100_000), headers: { 'content-type': 'application/apply-patch+yaml' }, want: { code: 400, reason: 'BadRequest', message: /exceeded max depth of 256/ } },
  { name: 'POST configmaps (JSON nested 100,000 deep)', method: 'POST', path: CMS, body: `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, want: { code: 400, reason: 'BadRequest', message: /exceeded max depth of 256/ } },
  { name: 'POST configmaps (more than 200,000 values)', method: 'POST', path: CMS, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"many"},"x":[${Array.from({ length: 200_001 }, () => '0').join(',')}]}`, want: { code: 400, reason: 'BadRequest', message: /more than 200000 values/ } },
  { name: 'DELETE configmaps (collection) answered as PartialObjectMetadata', method: 'DELETE', path: CMS, headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' }, want: { code: 406, reason: 'NotAcceptable' } },
  { name: 'DELETE configmaps (collection) as a Table with includeObject=All', method: 'DELETE', path: `${CMS}?includeObject=All`, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }, want: { code: 400, reason: 'BadRequest', message: /includeObject/ } },
];

describe('bad input gets a clear Status, and the server keeps serving', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway();
    const pre = await gw.admin.post(CMS, { ...CM, metadata: { name: 'stale' } });
    expect(pre.status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it.each(ROWS)('$name → $want.code', async ({ method, path, body, headers, want }) => {
    const r = await gw.admin.request(method, path, body, { headers });
    expect(r.status).toBe(want.code);
    expect(r.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: want.code });
    if (want.reason) expect(r.json.reason).toBe(want.reason);
    if (want.message) expect(r.json.message).toMatch(want.message);
  });

  it('stale resourceVersion on PUT → 409 Conflict', async () => {
    const cur = (await gw.admin.get(`${CMS}/stale`)).json;
    await gw.admin.put(`${CMS}/stale`, { ...cur, data: { v: '1' } });
    const r = await gw.admin.put(`${CMS}/stale`, { ...cur, data: { v: '2' } });
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({ reason: 'Conflict', details: { name: 'stale', kind: 'configmaps' } });
  });

  it('missing kind and apiVersion are filled from the endpoint (typed clients send none)', async () => {
    const r = await gw.admin.post(CMS, { metadata: { name: 'typeless' } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
  });

  it('Warn (default) reports each unknown field in a Warning header', async () => {
    const r = await gw.admin.post(CMS, { ...CM, metadata: { name: 'warned' }, bogus: 1, spec: { x: 1 } });
    expect(r.status).toBe(201);
    const warning = String(r.headers.warning);
    expect(warning).toContain('unknown field \\"bogus\\"');
    expect(warning).toContain('unknown field \\"spec\\"');
  });

  it('already exists → 409 AlreadyExists', async () => {
    const r = await gw.admin.post(CMS, { ...CM, metadata: { name: 'stale' } });
    expect(r.status).toBe(409);
    expect(r.json.reason).toBe('AlreadyExists');
  });

  it('a refused collection delete deleted nothing (the answer is checked before the request runs)', async () => {
    expect((await gw.admin.get(`${CMS}/stale`)).status).toBe(200);
  });

  it('GET configmaps?limit=9223372036854775807 is clamped to a page, with a continue token', async () => {
    const r = await gw.admin.get(`${CMS}?limit=9223372036854775807`);
    expect(r.status).toBe(200);
    expect(r.json.items.length).toBeGreaterThan(0);
  });

  it.each([
    { name: 'label', param: 'labelSelector', count: 1200, selector: Array.from({ length: 1200 }, (_, i) => `k!=v${i}`).join(',') },
    { name: 'field', param: 'fieldSelector', count: 600, selector: Array.from({ length: 600 }, (_, i) => `metadata.name!=n${i}`).join(',') },
  ])('a $name selector of $count requirements (over 12 KiB) is served: no count limit (upstream has none), only the request line bounds it', async ({ param, selector }) => {
    const path = `${CMS}?${param}=${encodeURIComponent(selector)}`;
    expect(path.length).toBeGreaterThan(12 * 1024);
    expect(path.length).toBeLessThan(16 * 1024 - 200);
    const r = await gw.admin.get(path);
    expect(r.status).toBe(200);
    expect(r.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('stale');
  });

  it.each([
    { name: 'CONNECT (Node emits it apart from requests)', request: `CONNECT 127.0.0.1:1 HTTP/1.1\r\nhost: 127.0.0.1:1\r\n\r\n`, status: 'HTTP/1.1 405 Method Not Allowed', code: 405, message: /does not allow the method "CONNECT"/ },
    { name: 'a method token the HTTP parser refuses (FOO)', request: `FOO ${CMS} HTTP/1.1\r\nhost: x\r\n\r\n`, status: 'HTTP/1.1 400 Bad Request', code: 400, message: /could not be parsed as HTTP\/1\.1 \(HPE_INVALID_METHOD/ },
    { name: 'a request line over 16 KiB', request: `GET ${CMS}?labelSelector=${'a'.repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`, status: 'HTTP/1.1 400 Bad Request', code: 400, message: /the request line and headers are too large \(limit 16 KiB\)/ },
  ])('$name → $code Status on a closing connection', async ({ request, status: statusLine, code, message }) => {
    const answer = await rawRequest(gw, request);
    expect(answer.split('\r\n')[0]).toBe(statusLine);
    const status = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(status).toMatchObject({ kind: 'Status', code });
    expect(status.message).toMatch(message);
  });

  it('kubectl binds with the upstream group spelling, and a binding keeps its roleRef (upstream ValidateRoleBindingUpdate)', () => {
    const kubectl = (...args: string[]) => kubectlSync({ kubeconfig: gw.kubeconfig, cacheDir: join(gw.dataDir, 'kubectl-cache') }, args);
    const created = kubectl('create', 'clusterrolebinding', 'viewers', '--clusterrole=view', '--group=viewers', '--serviceaccount=default:reader');
    expect(created.err).toBe('');
    expect(created.code).toBe(0);
    const changed = kubectl('patch', 'clusterrolebinding', 'viewers', '--type=merge', '-p', '{"roleRef":{"name":"edit"}}');
    expect(changed.code).not.toBe(0);
    expect(changed.err).toMatch(/roleRef: Invalid value: .*cannot change roleRef/);
    const subjects = kubectl('patch', 'clusterrolebinding', 'viewers', '--type=merge', '-p', '{"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"jane"}]}');
    expect(subjects.err).toBe('');
    expect(subjects.code).toBe(0);
  });

  // The client certificate is read once per connection: a TLS 1.2 renegotiation after it (which
  // could present another certificate) closes the connection, and the request sent after it is not served.
  it('a TLS renegotiation after the first request closes the connection', async () => {
    const pki = join(gw.dataDir, 'pki');
    const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f))));
    const get = `GET ${CMS} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n`;
    const answers = await new Promise<string[]>((resolve) => {
      const seen: string[] = [];
      const socket = tls.connect({ host: '127.0.0.1', port: gw.port, ca, cert, key, maxVersion: 'TLSv1.2' }, () => socket.write(get));
      socket.setEncoding('utf8');
      socket.on('error', () => undefined);
      socket.on('data', (d: string) => {
        if (d.startsWith('HTTP/1.1')) seen.push(d.slice(0, 12));
        if (seen.length === 1 && d.startsWith('HTTP/1.1')) socket.renegotiate({ rejectUnauthorized: true }, (err) => !err && socket.write(get));
      });
      socket.on('close', () => resolve(seen));
    });
    expect(answers).toEqual(['HTTP/1.1 200']);
  });

  it('is still serving', async () => {
    expect((await gw.admin.get('/readyz')).status).toBe(200);
    expect((await gw.admin.get(CMS)).status).toBe(200);
  });
});

describe('runtime-config', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ args: ['--runtime-config=batch/v1=false'] });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('a disabled group version answers 404 and is gone from discovery', async () => {
    const r = await gw.admin.get('/apis/batch/v1/namespaces/default/jobs');
    expect(r.status).toBe(404);
    expect((await gw.admin.get('/apis/batch/v1')).status).toBe(404);
    const groups = (await gw.admin.get('/apis')).json.groups.map((g: any) => g.name);
    expect(groups).not.toContain('batch');
    expect(groups).toContain('apps');
  });
});
