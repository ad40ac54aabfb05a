/**
 * Where daemon pods go (upstream pkg/controller/daemon/util and NodeShouldRunDaemonPod):
 * node selector and required node affinity must match, and every NoSchedule / NoExecute
 * taint must be tolerated (daemon pods tolerate the node-condition taints by default).
 */
import type { OwnerReference } from '@orch/apimachinery';
import { podFromTemplate } from '../workload-common/pods';
import { CONTROLLER_REVISION_HASH_LABEL } from '../workload-common/revisions';
import type { DaemonSet, Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec, Taint, Toleration } from '../../framework/api';

/** Deprecated label upstream still sets on daemon pods: the DaemonSet's generation. */
export const POD_TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/** upstream AddOrUpdateDaemonPodTolerations: node problems never evict or block daemon pods. */
export function daemonTolerations(spec: PodSpec): Toleration[] {
  const wanted: Toleration[] = [
    { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.orch.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.orch.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.orch.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec['hostNetwork'] === true) wanted.push({ key: 'node.orch.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  const out = [...(spec.tolerations ?? [])];
  for (const t of wanted) {
    const i = out.findIndex((o) => o.key === t.key && (o.effect ?? '') === t.effect);
    if (i >= 0) out[i] = t;
    else out.push(t);
  }
  return out;
}

/** upstream Toleration.ToleratesTaint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (!t.operator || t.operator === 'Equal') return (t.value ?? '') === (taint.value ?? '');
  return t.operator === 'Exists';
}

function untolerated(taints: readonly Taint[], tolerations: readonly Toleration[], effects: readonly string[]): Taint | undefined {
  return taints.find((taint) => effects.includes(taint.effect) && !tolerations.some((t) => tolerates(t, taint)));
}

function requirementMatches(req: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || !/^-?\d+$/.test(value) || values.length !== 1 || !/^-?\d+$/.test(values[0])) return false;
      return req.operator === 'Gt' ? Number(value) > Number(values[0]) : Number(value) < Number(values[0]);
    }
  }
  return false;
}

/** A term matches when all its expressions (labels) and fields (metadata.name) do; an empty term matches nothing. */
function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (!exprs.length && !fields.length) return false;
  return exprs.every((r) => requirementMatches(r, node.metadata.labels?.[r.key])) && fields.every((r) => requirementMatches(r, r.key === 'metadata.name' ? node.metadata.name : undefined));
}

/** nodeSelector labels and required node affinity terms (ORed) match the node. */
export function fitsNodeAffinity(spec: PodSpec, node: Node): boolean {
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) if (node.metadata.labels?.[k] !== v) return false;
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return true;
  return required.nodeSelectorTerms.some((t) => termMatches(t, node));
}

/**
 * upstream NodeShouldRunDaemonPod: `shouldRun` — a daemon pod belongs on the node;
 * `shouldContinueRunning` — an existing one may stay (only NoExecute taints evict).
 */
export function nodeShouldRunDaemonPod(ds: DaemonSet, node: Node): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = ds.spec.template.spec ?? { containers: [] };
  if (spec.nodeName && spec.nodeName !== node.metadata.name) return { shouldRun: false, shouldContinueRunning: false };
  if (!fitsNodeAffinity(spec, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints = node.spec?.taints ?? [];
  const tolerations = daemonTolerations(spec);
  if (untolerated(taints, tolerations, ['NoSchedule', 'NoExecute'])) {
    return { shouldRun: false, shouldContinueRunning: !untolerated(taints, tolerations, ['NoExecute']) };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

/** upstream GetTargetNodeName: spec.nodeName, else the node named by the pod's `metadata.name` affinity. */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const f of term.matchFields ?? []) if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  }
  return undefined;
}

/**
 * The daemon pod for `node`: the template with the revision labels, the node-condition
 * tolerations, and required node affinity replaced by `metadata.name In [node]` (upstream
 * ReplaceDaemonSetPodNodeNameNodeAffinity; the scheduler binds it).
 */
export function daemonPodFor(ds: DaemonSet, node: string, hash: string, ref: OwnerReference): Pod {
  const labels: Record<string, string> = { [CONTROLLER_REVISION_HASH_LABEL]: hash };
  if (ds.metadata.generation !== undefined) labels[POD_TEMPLATE_GENERATION_LABEL] = String(ds.metadata.generation);
  const pod = podFromTemplate(ds.spec.template, ds, ref, { labels });
  pod.spec.tolerations = daemonTolerations(pod.spec);
  const affinity = pod.spec.affinity ?? {};
  const nodeAffinity = affinity.nodeAffinity ?? {};
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] };
  pod.spec.affinity = { ...affinity, nodeAffinity };
  return pod;
}
