import type { KubeObject } from '@orch/apimachinery';
import { ALLOW, type Authorizer } from '@orch/auth';
import { celToJson, type CelResult } from '@orch/cel';
import type { AdmissionAttributes } from '../pipeline/admit';
import { admissionEnvironment, admissionRequest, ALL_READS, convertedActivation, readsOfPrograms, type VersionedAttributes } from './admission-request';

const env = admissionEnvironment();
const authorizer: Authorizer = { name: 'AlwaysAllow', authorize: () => ALLOW() };

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'team-a' }, data: { a: '1' } } as KubeObject;

/** Requests that differ in every field the AdmissionRequest takes from them. */
const REQUESTS: Record<string, VersionedAttributes> = {
  'a create': { operation: 'CREATE', object: configMap, kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, subresource: '', namespace: 'team-a', name: 'cm', userInfo: { username: 'alice', groups: ['devs'] }, dryRun: false },
  'a dry-run update of a subresource by a user with uid and extra': {
    operation: 'UPDATE',
    object: configMap,
    oldObject: configMap,
    kind: { group: 'apps', version: 'v1', kind: 'Scale' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    subresource: 'scale',
    namespace: 'team-a',
    name: 'web',
    userInfo: { username: 'bob', uid: 'u-1', groups: ['devs', 'ops'], extra: { scopes: ['a'] } },
    dryRun: true,
  },
  'a cluster-scoped delete with options, matched as another version': {
    operation: 'DELETE',
    oldObject: configMap,
    kind: { group: 'example.io', version: 'v1beta1', kind: 'Widget' },
    resource: { group: 'example.io', version: 'v1beta1', resource: 'widgets' },
    requested: { kind: { group: 'example.io', version: 'v1', kind: 'Widget' }, resource: { group: 'example.io', version: 'v1', resource: 'widgets' } },
    subresource: '',
    namespace: '',
    name: 'w',
    userInfo: { username: 'carol', groups: [] },
    dryRun: false,
    options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Foreground' },
  },
  'a connect without options': { operation: 'CONNECT', kind: { group: '', version: 'v1', kind: 'PodExecOptions' }, resource: { group: '', version: 'v1', resource: 'pods' }, subresource: 'exec', namespace: 'team-a', name: 'p', userInfo: { username: 'dave', groups: ['x'] }, dryRun: false },
};

/** Expressions reading `request` each way: one field, fields left out of some requests, nested fields, the hidden ones, the whole value. */
const EXPRESSIONS = [
  'request.operation',
  'request.name',
  'request.namespace',
  'has(request.namespace)',
  'has(request.subResource) ? request.subResource : "none"',
  'request.requestSubResource',
  'request.kind.version',
  'request.requestKind',
  'request.resource.resource + "/" + request.requestResource.version',
  'request.userInfo.username',
  'request.userInfo.groups.exists(g, g == "ops")',
  'has(request.userInfo.uid)',
  'request.userInfo',
  'request.dryRun',
  'request.options',
  'has(request.options) && request.options != null && request.options.kind == "DeleteOptions"',
  'request.uid == null && request.object == null && request.oldObject == null',
  'has(request.uid) && has(request.object)',
  'has(request.unknownField)',
  'request.unknownField',
  'request.size()',
  'request',
  'request.userInfo.username == object.metadata.name || request.operation in ["CREATE", "DELETE"]',
];

/** The expression's value as JSON, or its error message. */
function answer(expression: string, reads: 'all' | 'its own', a: AdmissionAttributes): unknown {
  const program = env.compile(expression);
  const activation = convertedActivation(env, a, authorizer, reads === 'all' ? ALL_READS : readsOfPrograms([program]));
  try {
    return celToJson((program.evaluate({ ...activation }) as CelResult).value);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

describe('admission expressions: `request` converted from only the fields the expressions read', () => {
  it.each(Object.keys(REQUESTS).flatMap((r) => EXPRESSIONS.map((x) => [r, x] as const)))('%s: %s answers as with the whole request', (r, expression) => {
    expect(answer(expression, 'its own', REQUESTS[r])).toEqual(answer(expression, 'all', REQUESTS[r]));
  });

  it.each(Object.keys(REQUESTS))('%s: the AdmissionRequest of a webhook has each field in order, absent ones left out', (r) => {
    const a = REQUESTS[r];
    const want = {
      uid: 'id',
      kind: a.kind,
      resource: a.resource,
      ...(a.subresource ? { subResource: a.subresource, requestSubResource: a.subresource } : {}),
      requestKind: a.requested?.kind ?? a.kind,
      requestResource: a.requested?.resource ?? a.resource,
      name: a.name,
      ...(a.namespace ? { namespace: a.namespace } : {}),
      operation: a.operation,
      userInfo: { username: a.userInfo.username, ...(a.userInfo.uid ? { uid: a.userInfo.uid } : {}), groups: a.userInfo.groups, ...(a.userInfo.extra ? { extra: a.userInfo.extra } : {}) },
      object: a.object ?? null,
      oldObject: a.oldObject ?? null,
      dryRun: a.dryRun,
      options: a.options ?? ({ CREATE: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' }, UPDATE: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] } } as Record<string, unknown>)[a.operation] ?? null,
    };
    expect(JSON.stringify(admissionRequest(a, 'id'))).toBe(JSON.stringify(want));
  });
});
