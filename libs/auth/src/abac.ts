import { ALLOW, NO_OPINION, type AuthorizationAttributes, type Authorizer, type SubjectRules } from './authz';
import { AUTHENTICATED_GROUP, type UserInfo } from './user';

/** One ABAC policy (upstream abac.PolicySpec), after conversion from its file version. */
export interface AbacPolicy {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  namespace: string;
  resource: string;
  nonResourcePath: string;
}

const V1BETA1 = 'abac.authorization.kubernetes.io/v1beta1';
const ORCH_V1BETA1 = 'abac.authorization.orch.io/v1beta1';
const SPEC_FIELDS = ['user', 'group', 'readonly', 'apiGroup', 'namespace', 'resource', 'nonResourcePath'];
const V0_FIELDS = ['user', 'group', 'readonly', 'resource', 'namespace'];

/**
 * Parses an ABAC policy file (`--authorization-policy-file`, upstream format): one JSON object
 * per line, blank lines and lines starting with `#` skipped. Versioned lines are
 * `{"apiVersion": "abac.authorization.kubernetes.io/v1beta1" (or the orch.io spelling),
 * "kind": "Policy", "spec": {...}}`; unversioned lines are the v0 format. Conversion as
 * upstream: `*` as user or group means every authenticated user; in v0 an empty user and group
 * mean every authenticated user, empty namespace and resource mean all (and then every
 * non-resource path too), and every API group matches. Throws naming the line and field.
 */
export function parseAbacPolicyFile(text: string, source: string): AbacPolicy[] {
  const out: AbacPolicy[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const at = `${source}:${i + 1}`;
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(line) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`${at}: not a JSON object: ${(e as Error).message}`);
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new Error(`${at}: not a JSON object`);
    const str = (o: Record<string, unknown>, k: string) => {
      const v = o[k];
      if (v !== undefined && typeof v !== 'string') throw new Error(`${at}: ${k} must be a string`);
      return (v as string | undefined) ?? '';
    };
    const unknown = (o: Record<string, unknown>, allowed: string[], prefix: string) => {
      for (const k of Object.keys(o)) if (!allowed.includes(k)) throw new Error(`${at}: unknown field ${JSON.stringify(prefix + k)}`);
    };
    if (obj.apiVersion !== undefined || obj.kind !== undefined) {
      if (obj.apiVersion !== V1BETA1 && obj.apiVersion !== ORCH_V1BETA1) throw new Error(`${at}: apiVersion must be ${V1BETA1}, got ${JSON.stringify(obj.apiVersion)}`);
      if (obj.kind !== 'Policy') throw new Error(`${at}: kind must be Policy, got ${JSON.stringify(obj.kind)}`);
      unknown(obj, ['apiVersion', 'kind', 'spec'], '');
      const spec = (obj.spec ?? {}) as Record<string, unknown>;
      if (typeof spec !== 'object' || Array.isArray(spec)) throw new Error(`${at}: spec must be an object`);
      unknown(spec, SPEC_FIELDS, 'spec.');
      if (spec.readonly !== undefined && typeof spec.readonly !== 'boolean') throw new Error(`${at}: spec.readonly must be a boolean`);
      const p: AbacPolicy = {
        user: str(spec, 'user'),
        group: str(spec, 'group'),
        readonly: spec.readonly === true,
        apiGroup: str(spec, 'apiGroup'),
        namespace: str(spec, 'namespace'),
        resource: str(spec, 'resource'),
        nonResourcePath: str(spec, 'nonResourcePath'),
      };
      if (p.user === '*' || p.group === '*') Object.assign(p, { user: '', group: AUTHENTICATED_GROUP });
      out.push(p);
      return;
    }
    unknown(obj, V0_FIELDS, '');
    if (obj.readonly !== undefined && typeof obj.readonly !== 'boolean') throw new Error(`${at}: readonly must be a boolean`);
    const user = str(obj, 'user');
    const group = str(obj, 'group');
    const namespace = str(obj, 'namespace');
    const resource = str(obj, 'resource');
    const everyone = (!user && !group) || user === '*' || group === '*';
    out.push({
      user: everyone ? '' : user,
      group: everyone ? AUTHENTICATED_GROUP : group,
      readonly: obj.readonly === true,
      apiGroup: '*',
      namespace: namespace || '*',
      resource: resource || '*',
      nonResourcePath: !namespace && !resource ? '*' : '',
    });
  });
  return out;
}

function subjectMatches(p: AbacPolicy, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else if (p.user === user.username) matched = true;
    else return false;
  }
  if (p.group) {
    if (p.group === '*') matched = true;
    else if (user.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

function matches(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (p.readonly && !READ_ONLY_VERBS.has(a.verb)) return false;
  if (a.isResourceRequest) {
    return (p.namespace === '*' || p.namespace === a.namespace) && (p.resource === '*' || p.resource === a.resource) && (p.apiGroup === '*' || p.apiGroup === a.apiGroup);
  }
  if (!p.nonResourcePath) return false;
  return p.nonResourcePath === '*' || p.nonResourcePath === a.path || (p.nonResourcePath.endsWith('*') && a.path.startsWith(p.nonResourcePath.replace(/\*+$/, '')));
}

/**
 * ABAC (`--authorization-mode=ABAC`, upstream abac.PolicyList): a request is allowed when a
 * policy matches its subject (user, group; `*`), verb (readonly policies: get, list, watch),
 * and either its resource (namespace, resource, apiGroup; `*`) or its non-resource path
 * (`*`, exact, or a `/prefix/*`). Otherwise no opinion: ABAC never denies.
 */
export function abacAuthorizer(policies: readonly AbacPolicy[]): Authorizer {
  const verbs = (readonly: boolean) => (readonly ? ['get', 'list', 'watch'] : ['*']);
  return {
    name: 'ABAC',
    authorize: (a) => (policies.some((p) => matches(p, a)) ? ALLOW() : NO_OPINION('No policy matched.')),
    rulesFor(user, namespace): SubjectRules {
      const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false };
      for (const p of policies) {
        if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
        if (p.resource) out.resourceRules.push({ verbs: verbs(p.readonly), apiGroups: [p.apiGroup], resources: [p.resource] });
        if (p.nonResourcePath) out.nonResourceRules.push({ verbs: verbs(p.readonly), nonResourceURLs: [p.nonResourcePath] });
      }
      return out;
    },
  };
}
