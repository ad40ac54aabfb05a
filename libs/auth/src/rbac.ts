import { canonicalGroup } from '@orch/api';
import type { LabelSelectorObject } from '@orch/apimachinery';
import { ALLOW, NO_OPINION, subjectRules, type AuthorizationAttributes, type Authorizer } from './authz';
import type { UserInfo } from './user';

/** rbac.authorization.orch.io/v1 PolicyRule. */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount' | string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind: 'Role' | 'ClusterRole' | string;
  name: string;
}

interface Meta {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

export interface RoleObject extends Meta {
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] }[] } | null;
}

export interface BindingObject extends Meta {
  subjects?: Subject[] | null;
  roleRef: RoleRef;
}

const SA_PREFIX = 'system:serviceaccount:';

/**
 * Where a binding's subject is filed: users and service accounts under the user name they
 * match (a ServiceAccount subject is the user `system:serviceaccount:<namespace>:<name>`, as
 * upstream appliesTo compares them), groups under the group name; other kinds nowhere.
 */
function subjectSlot(s: Subject, bindingNamespace: string): { group: boolean; name: string } | undefined {
  switch (s.kind) {
    case 'User':
      return { group: false, name: s.name };
    case 'Group':
      return { group: true, name: s.name };
    case 'ServiceAccount':
      return { group: false, name: `${SA_PREFIX}${s.namespace || bindingNamespace}:${s.name}` };
    default:
      return undefined;
  }
}

const has = (list: readonly string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

function groupMatches(rule: PolicyRule, group: string): boolean {
  const g = canonicalGroup(group);
  return !!rule.apiGroups && rule.apiGroups.some((x) => x === '*' || canonicalGroup(x) === g);
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const rs = rule.resources;
  if (!rs) return false;
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rs) {
    if (r === '*' || r === combined) return true;
    if (subresource && (r === `*/${subresource}` || r === `${resource}/*`)) return true;
  }
  return false;
}

function nonResourceMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** upstream RuleAllows: whether one rule allows the request. */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.isResourceRequest) return nonResourceMatches(rule, a.path);
  if (!groupMatches(rule, a.apiGroup) || !resourceMatches(rule, a.resource, a.subresource)) return false;
  return !rule.resourceNames || rule.resourceNames.length === 0 || rule.resourceNames.includes(a.name);
}

function selectorMatches(sel: LabelSelectorObject, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const v = labels[e.key];
    switch (e.operator) {
      case 'In':
        if (v === undefined || !(e.values ?? []).includes(v)) return false;
        break;
      case 'NotIn':
        if (v !== undefined && (e.values ?? []).includes(v)) return false;
        break;
      case 'Exists':
        if (v === undefined) return false;
        break;
      case 'DoesNotExist':
        if (v !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** A rule's identity for "the same rule" (field order and absent-vs-empty do not matter). */
function ruleKey(r: PolicyRule): string {
  return JSON.stringify([r.verbs ?? [], r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.nonResourceURLs ?? []]);
}

/**
 * The rules an aggregated ClusterRole holds (upstream clusterrole-aggregation controller): the
 * rules of every other ClusterRole one of its `clusterRoleSelectors` matches, selector by
 * selector and by name within one, each rule once. Undefined for a role without an
 * aggregationRule. One level only: a matched role that is itself aggregated contributes the
 * rules it holds now (the controller settles chains such as view → edit → admin as each
 * update brings the next).
 */
export function aggregatedRules(role: RoleObject, clusterRoles: Iterable<RoleObject>): PolicyRule[] | undefined {
  const selectors = role.aggregationRule?.clusterRoleSelectors;
  if (!selectors?.length) return undefined;
  const others = [...clusterRoles].filter((r) => r.metadata.name !== role.metadata.name).sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  const seen = new Set<string>();
  const out: PolicyRule[] = [];
  for (const sel of selectors) {
    for (const other of others) {
      if (!selectorMatches(sel, other.metadata.labels ?? {})) continue;
      for (const r of other.rules ?? []) {
        const key = ruleKey(r);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(r);
      }
    }
  }
  return out;
}

/** Whether two rule lists are the same rules in the same order. */
export function sameRules(a: readonly PolicyRule[], b: readonly PolicyRule[]): boolean {
  return a.length === b.length && a.every((r, i) => ruleKey(r) === ruleKey(b[i]));
}

/** A binding as filed in the index: where its rules come from. */
interface IndexedBinding {
  /** Namespace of a RoleBinding ('' for ClusterRoleBindings). */
  namespace: string;
  roleRef: RoleRef;
  /** `<namespace>/<name>` of the Role a RoleBinding refers to, made once here (not per decision). */
  roleKey: string;
  /** `<kind>/<namespace>/<name>` of the binding, for reasons. */
  id: string;
}

/** binding id → the binding, for one subject. */
type Filed = Map<string, IndexedBinding>;

/**
 * The RBAC objects of the cluster, indexed for decisions (ISSUE: decisions indexed by subject,
 * not scanned): bindings are filed under each subject they name, so a decision looks only
 * at the bindings of the requesting user (or service account) and its groups, found by their
 * names as the request carries them (no key is built per decision). A role's rules are the
 * ones it holds: aggregated ClusterRoles get theirs written by the controller-manager's
 * clusterrole-aggregation controller (as upstream). Fed by `upsert`/`remove` from a watch of
 * the four RBAC resources.
 */
export class RbacIndex {
  private readonly clusterRoles = new Map<string, RoleObject>();
  /** `<namespace>/<name>` → Role. */
  private readonly roles = new Map<string, RoleObject>();
  /** user name → bindings naming that user (or service account). */
  private readonly byUser = new Map<string, Filed>();
  /** group name → bindings naming that group. */
  private readonly byGroup = new Map<string, Filed>();
  /** binding id → where it is filed. */
  private readonly filedUnder = new Map<string, { map: Map<string, Filed>; name: string }[]>();

  upsert(kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding', obj: RoleObject | BindingObject): void {
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    switch (kind) {
      case 'ClusterRole':
        this.clusterRoles.set(name, obj as RoleObject);
        return;
      case 'Role':
        this.roles.set(`${ns}/${name}`, obj as RoleObject);
        return;
      default: {
        const b = obj as BindingObject;
        const namespace = kind === 'RoleBinding' ? ns : '';
        const id = `${kind}/${namespace}/${name}`;
        this.removeBinding(id);
        const entry: IndexedBinding = { namespace, roleRef: b.roleRef, roleKey: `${namespace}/${b.roleRef.name}`, id };
        const slots: { map: Map<string, Filed>; name: string }[] = [];
        for (const s of b.subjects ?? []) {
          const slot = subjectSlot(s, ns);
          if (!slot) continue;
          const map = slot.group ? this.byGroup : this.byUser;
          slots.push({ map, name: slot.name });
          let m = map.get(slot.name);
          if (!m) map.set(slot.name, (m = new Map()));
          m.set(id, entry);
        }
        this.filedUnder.set(id, slots);
      }
    }
  }

  remove(kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding', namespace: string, name: string): void {
    if (kind === 'ClusterRole') this.clusterRoles.delete(name);
    else if (kind === 'Role') this.roles.delete(`${namespace}/${name}`);
    else this.removeBinding(`${kind}/${kind === 'RoleBinding' ? namespace : ''}/${name}`);
  }

  private removeBinding(id: string): void {
    for (const { map, name } of this.filedUnder.get(id) ?? []) {
      const m = map.get(name);
      m?.delete(id);
      if (m && m.size === 0) map.delete(name);
    }
    this.filedUnder.delete(id);
  }

  /** The rules a ClusterRole holds. */
  clusterRoleRules(name: string): PolicyRule[] {
    return this.clusterRoles.get(name)?.rules ?? [];
  }

  private refRules(b: IndexedBinding): PolicyRule[] {
    if (b.roleRef.kind === 'ClusterRole') return this.clusterRoleRules(b.roleRef.name);
    if (b.roleRef.kind === 'Role' && b.namespace) return this.roles.get(b.roleKey)?.rules ?? [];
    return [];
  }

  /** Calls `visit` with each rule of `bindings` that applies in `namespace`; the id of the binding whose rule it accepted. */
  private visitFiled(bindings: Filed | undefined, namespace: string, visit: (rule: PolicyRule) => boolean): string | undefined {
    if (!bindings) return undefined;
    for (const b of bindings.values()) {
      if (b.namespace && b.namespace !== namespace) continue;
      for (const rule of this.refRules(b)) if (visit(rule)) return b.id;
    }
    return undefined;
  }

  /**
   * Calls `visit` with the rules that apply to `user` in `namespace` (those bound to the user or
   * its service account, then to each of its groups; cluster-wide bindings and the namespace's
   * RoleBindings); stops when `visit` returns true. Returns the id of the binding whose rules
   * stopped it.
   */
  visitRules(user: UserInfo, namespace: string, visit: (rule: PolicyRule) => boolean): string | undefined {
    const by = this.visitFiled(this.byUser.get(user.username), namespace, visit);
    if (by) return by;
    for (const g of user.groups) {
      const byGroup = this.visitFiled(this.byGroup.get(g), namespace, visit);
      if (byGroup) return byGroup;
    }
    return undefined;
  }

  /** Every rule that applies to `user` in `namespace` ('' = cluster-wide rules only). */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    const out: PolicyRule[] = [];
    this.visitRules(user, namespace, (r) => (out.push(r), false));
    return out;
  }

  /** A Role or ClusterRole's rules, by reference from a binding in `namespace`. */
  roleRefRules(namespace: string, ref: RoleRef): PolicyRule[] | undefined {
    if (ref.kind === 'ClusterRole') return this.clusterRoles.has(ref.name) ? this.clusterRoleRules(ref.name) : undefined;
    return this.roles.get(`${namespace}/${ref.name}`)?.rules ?? undefined;
  }

  get bindingCount(): number {
    return this.filedUnder.size;
  }
}

/**
 * The RBAC authorization mode: allows when a rule of a role bound to the user (or one of its
 * groups, or its service account) allows the request; otherwise no opinion (never deny).
 */
export function rbacAuthorizer(index: RbacIndex): Authorizer {
  return {
    name: 'RBAC',
    authorize(a) {
      const by = index.visitRules(a.user, a.namespace, (rule) => ruleAllows(a, rule));
      return by ? ALLOW(`RBAC: allowed by ${by}`) : NO_OPINION();
    },
    rulesFor: (user, namespace) => subjectRules(index.rulesFor(user, namespace)),
  };
}

/** upstream's privileged group: its members may do anything, whatever the policy says. */
export const PRIVILEGED_GROUP = 'system:masters';

/** Allows members of `system:masters` before any mode is asked (upstream NewPrivilegedGroups). */
export function privilegedGroupAuthorizer(): Authorizer {
  return {
    name: 'PrivilegedGroup',
    authorize: (a) => (a.user.groups.includes(PRIVILEGED_GROUP) ? ALLOW('system:masters') : NO_OPINION()),
    rulesFor: (user) =>
      subjectRules(
        user.groups.includes(PRIVILEGED_GROUP)
          ? [
              { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
              { verbs: ['*'], nonResourceURLs: ['*'] },
            ]
          : [],
      ),
  };
}

/** One verb × group × resource × name (or URL) of a rule (upstream BreakdownRule). */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        if (rule.resourceNames?.length) for (const name of rule.resourceNames) out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
        else out.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
      }
    }
    for (const url of rule.nonResourceURLs ?? []) out.push({ verbs: [verb], nonResourceURLs: [url] });
  }
  return out;
}

/** Whether `owner` covers the atomic rule `sub` (upstream ruleCovers; `*` in sub is a literal only `*` covers). */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verb = sub.verbs[0];
  if (!owner.verbs.includes('*') && !owner.verbs.includes(verb)) return false;
  if (sub.nonResourceURLs?.length) {
    const url = sub.nonResourceURLs[0];
    return (owner.nonResourceURLs ?? []).some((u) => u === '*' || u === url || (u.endsWith('*') && url.startsWith(u.slice(0, -1))));
  }
  const group = sub.apiGroups![0];
  if (!(owner.apiGroups ?? []).some((g) => g === '*' || canonicalGroup(g) === canonicalGroup(group))) return false;
  const resource = sub.resources![0];
  const slash = resource.indexOf('/');
  const ownerResources = owner.resources ?? [];
  const resourceOk =
    ownerResources.includes('*') ||
    ownerResources.includes(resource) ||
    (slash > 0 && (ownerResources.includes(`${resource.slice(0, slash)}/*`) || ownerResources.includes(`*${resource.slice(slash)}`)));
  if (!resourceOk) return false;
  if (!owner.resourceNames?.length) return true;
  return !!sub.resourceNames?.length && owner.resourceNames.includes(sub.resourceNames[0]);
}

/** The parts of `requested` that `owned` does not cover (empty: no escalation). upstream validation.Covers. */
export function uncoveredRules(owned: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of requested) for (const sub of breakdownRule(rule)) if (!owned.some((o) => ruleCovers(o, sub))) missing.push(sub);
  return missing;
}

/** A rule in upstream's compact text form (`{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`), for error messages. */
export function ruleString(r: PolicyRule): string {
  const q = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${q(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${q(r.resources)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${q(r.resourceNames)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${q(r.nonResourceURLs)}`);
  parts.push(`Verbs:${q(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}
