import { canonicalGroup } from '@orch/api';
import type { FlowSchema, NonResourcePolicyRule, PolicyRulesWithSubjects, RequestDigest, ResourcePolicyRule, Subject } from './types';

// Classification of a request to a FlowSchema and flow (upstream apiserver/pkg/util/flowcontrol
// matching.go): FlowSchemas are tried in order of matchingPrecedence (then name); the first
// whose rules match the request's user and target wins; its distinguisher splits it into flows.

const ALL = '*';

function matchesSubject(s: Subject, user: RequestDigest['user']): boolean {
  switch (s.kind) {
    case 'User':
      return s.user?.name === ALL || s.user?.name === user.username;
    case 'Group':
      return s.group?.name === ALL || user.groups.includes(s.group?.name ?? '');
    case 'ServiceAccount': {
      const sa = s.serviceAccount;
      if (!sa) return false;
      const prefix = 'system:serviceaccount:';
      if (!user.username.startsWith(prefix)) return false;
      const [ns, name] = user.username.slice(prefix.length).split(':');
      return (sa.namespace === ALL || sa.namespace === ns) && (sa.name === ALL || sa.name === name);
    }
    default:
      return false;
  }
}

function hasOrAll(list: readonly string[] | undefined, value: string): boolean {
  return !!list && (list.includes(ALL) || list.includes(value));
}

function matchesResourceRule(r: ResourcePolicyRule, d: RequestDigest): boolean {
  if (!hasOrAll(r.verbs, d.verb)) return false;
  if (!hasOrAll(r.apiGroups, d.apiGroup) && !hasOrAll(r.apiGroups, canonicalGroup(d.apiGroup))) return false;
  const resource = d.subresource ? `${d.resource}/${d.subresource}` : d.resource;
  if (!hasOrAll(r.resources, resource)) return false;
  if (!d.namespace) return !!r.clusterScope;
  return hasOrAll(r.namespaces, d.namespace);
}

function matchesNonResourceRule(r: NonResourcePolicyRule, d: RequestDigest): boolean {
  if (!hasOrAll(r.verbs, d.verb)) return false;
  return r.nonResourceURLs.some((u) => u === ALL || u === d.path || (u.endsWith('/*') && (d.path.startsWith(u.slice(0, -1)) || d.path === u.slice(0, -2))));
}

function matchesRules(p: PolicyRulesWithSubjects, d: RequestDigest): boolean {
  if (!(p.subjects ?? []).some((s) => matchesSubject(s, d.user))) return false;
  return d.isResourceRequest ? (p.resourceRules ?? []).some((r) => matchesResourceRule(r, d)) : (p.nonResourceRules ?? []).some((r) => matchesNonResourceRule(r, d));
}

/** FlowSchemas in the order they are tried: matchingPrecedence ascending, then name. */
export function orderFlowSchemas(schemas: readonly FlowSchema[]): FlowSchema[] {
  return [...schemas].sort((a, b) => (a.spec.matchingPrecedence ?? 1000) - (b.spec.matchingPrecedence ?? 1000) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/** The first of the ordered schemas that matches the request (skipping those `usable` refuses, e.g. dangling ones). */
export function classify(ordered: readonly FlowSchema[], d: RequestDigest, usable: (fs: FlowSchema) => boolean = () => true): FlowSchema | undefined {
  return ordered.find((fs) => usable(fs) && (fs.spec.rules ?? []).some((p) => matchesRules(p, d)));
}

/** The flow of a request within its FlowSchema: the schema name and the distinguisher's value. */
export function flowKey(fs: FlowSchema, d: RequestDigest): string {
  const method = fs.spec.distinguisherMethod?.type;
  const distinguisher = method === 'ByUser' ? d.user.username : method === 'ByNamespace' ? d.namespace : '';
  return `${fs.metadata.name}\u0000${distinguisher}`;
}
