import type { coreV1 } from '@orch/api';
import { NODE_RULES, NODES_GROUP } from './bootstrap-policy';
import { ALLOW, NO_OPINION, subjectRules, type AuthorizationAttributes, type Authorizer } from './authz';
import { ruleAllows } from './rbac';
import type { UserInfo } from './user';

const NODE_USER_PREFIX = 'system:node:';

/** The node a user is, when it is a node identity (`system:node:<name>` in `system:nodes`). */
export function nodeNameOf(user: UserInfo): string | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups.includes(NODES_GROUP)) return undefined;
  const name = user.username.slice(NODE_USER_PREFIX.length);
  return name || undefined;
}

/** What the Node authorizer reads of a pod: the generated Pod's spec, any part of it absent. */
export interface PodReferences {
  spec?: Partial<coreV1.PodSpec>;
}

/** Where a pod names an object of a kind: a volume, a projected volume's source, a container's envFrom and env. */
interface NamedIn {
  volume(v: coreV1.Volume): string | undefined;
  projected(p: coreV1.VolumeProjection): string | undefined;
  envFrom(e: coreV1.EnvFromSource): string | undefined;
  env(e: coreV1.EnvVar): string | undefined;
}

const NAMED_IN: Readonly<Record<'secrets' | 'configmaps', NamedIn>> = {
  secrets: { volume: (v) => v.secret?.secretName, projected: (p) => p.secret?.name, envFrom: (e) => e.secretRef?.name, env: (e) => e.valueFrom?.secretKeyRef?.name },
  configmaps: { volume: (v) => v.configMap?.name, projected: (p) => p.configMap?.name, envFrom: (e) => e.configMapRef?.name, env: (e) => e.valueFrom?.configMapKeyRef?.name },
};

/** The root CA bundle config maps of every namespace (orch and upstream spellings). */
const ROOT_CA_CONFIGMAPS = ['orch-root-ca.crt', 'kube-root-ca.crt'];

type Referenced = 'secrets' | 'configmaps' | 'persistentvolumeclaims' | 'serviceaccounts';

/** The names of objects of `kind` a pod uses (volumes, env, envFrom, image pull secrets, its account). */
export function podReferences(pod: PodReferences, kind: Referenced): Set<string> {
  const out = new Set<string>();
  const spec = pod.spec ?? {};
  const add = (n: string | undefined) => n && out.add(n);
  const containers = [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])];
  switch (kind) {
    case 'serviceaccounts':
      add(spec.serviceAccountName || 'default');
      break;
    case 'persistentvolumeclaims':
      for (const v of spec.volumes ?? []) add(v.persistentVolumeClaim?.claimName);
      break;
    case 'secrets':
    case 'configmaps': {
      if (kind === 'secrets') for (const s of spec.imagePullSecrets ?? []) add(s.name);
      // The service-account volume (ca.crt from the root CA config map) unless automounting is off.
      else if (spec.automountServiceAccountToken !== false) ROOT_CA_CONFIGMAPS.forEach(add);
      const named = NAMED_IN[kind];
      for (const v of spec.volumes ?? []) {
        add(named.volume(v));
        for (const p of v.projected?.sources ?? []) add(named.projected(p));
      }
      for (const c of containers) {
        for (const e of c.envFrom ?? []) add(named.envFrom(e));
        for (const e of c.env ?? []) add(named.env(e));
      }
      break;
    }
  }
  return out;
}

/** The pods of `namespace` bound to `node`. */
export type PodsOnNode = (namespace: string, node: string) => Promise<PodReferences[]>;

const GRAPH_VERBS = new Set(['get', 'list', 'watch']);

/**
 * The Node authorization mode (upstream NodeAuthorizer): only for node identities. A node may
 * read the secrets, config maps and persistent volume claims, and request tokens for the
 * service accounts, that pods bound to it use; everything else a node does is decided by the
 * node rules (NODE_RULES). Anything outside both is no opinion (RBAC may still allow it).
 */
export function nodeAuthorizer(podsOnNode: PodsOnNode): Authorizer {
  return {
    name: 'Node',
    async authorize(a: AuthorizationAttributes) {
      const node = nodeNameOf(a.user);
      if (!node) return NO_OPINION();
      if (a.isResourceRequest && a.apiGroup === '') {
        const graph = graphKind(a);
        if (graph) {
          if (!a.name || !a.namespace) return NO_OPINION(`node '${node}' may only access single ${a.resource} in a namespace`);
          const pods = await podsOnNode(a.namespace, node);
          if (pods.some((p) => podReferences(p, graph).has(a.name))) return ALLOW(`node '${node}' runs a pod that uses ${a.resource} '${a.namespace}/${a.name}'`);
          return NO_OPINION(`no relationship found between node '${node}' and this object`);
        }
      }
      return NODE_RULES.some((r) => ruleAllows(a, r)) ? ALLOW('node rules') : NO_OPINION();
    },
    // The per-pod grants depend on the object asked for: a node's rules list is incomplete.
    rulesFor: (user) => (nodeNameOf(user) ? { ...subjectRules(NODE_RULES), incomplete: true } : subjectRules([])),
  };
}

function graphKind(a: AuthorizationAttributes): Referenced | undefined {
  if ((a.resource === 'secrets' || a.resource === 'configmaps' || a.resource === 'persistentvolumeclaims') && !a.subresource && GRAPH_VERBS.has(a.verb)) return a.resource;
  if (a.resource === 'serviceaccounts' && a.subresource === 'token' && a.verb === 'create') return 'serviceaccounts';
  return undefined;
}
