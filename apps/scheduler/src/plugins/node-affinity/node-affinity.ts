import { FieldError } from '@orch/apimachinery';
import type { Node, NodeAffinity as NodeAffinitySpec, Pod } from '../../framework/api';
import type { CycleState } from '../../framework/cycle-state';
import { ActionType, Events } from '../../framework/events';
import { PreFilterResult, type ClusterEventWithHint, type FilterScorePlugin, type PluginRegistration, type QueueingHint } from '../../framework/interface';
import { NodeSelectorMatcher, PreferredSchedulingTerms, RequiredNodeAffinity } from '../../framework/node-affinity';
import { Status } from '../../framework/status';
import { NodeInfo, PodInfo } from '../../framework/types';
import { defaultNormalizeScore } from '../helper';
import { NODE_AFFINITY } from '../names';

export const ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector";
export const ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity";
export const ERR_REASON_CONFLICT = 'pod affinity terms conflict';

export interface NodeAffinityArgs {
  /** Affinity every pod of the profile must also satisfy (required) or prefers (preferred). */
  addedAffinity?: NodeAffinitySpec;
}

const REJECT_POD = Status.unresolvable(ERR_REASON_POD).withPlugin(NODE_AFFINITY);
const REJECT_ENFORCED = Status.unresolvable(ERR_REASON_ENFORCED).withPlugin(NODE_AFFINITY);

const PRE_FILTER_KEY = `PreFilter${NODE_AFFINITY}`;
const PRE_SCORE_KEY = `PreScore${NODE_AFFINITY}`;

/**
 * The node names a pod is restricted to by `matchFields: metadata.name In [...]` in every
 * required term (upstream getPreFilterNodeNames); undefined when some term is unrestricted.
 */
export function preFilterNodeNames(affinity: NodeAffinitySpec | undefined): Set<string> | undefined {
  const terms = affinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms?.length) return undefined;
  let all: Set<string> | undefined;
  for (const t of terms) {
    let termNames: Set<string> | undefined;
    for (const f of t.matchFields ?? []) {
      if (f.key !== 'metadata.name' || f.operator !== 'In') continue;
      const names = new Set(f.values ?? []);
      termNames = termNames ? new Set([...termNames].filter((n) => names.has(n))) : names;
    }
    if (!termNames) return undefined;
    all = all ? new Set([...all, ...termNames]) : termNames;
  }
  return all;
}

/** True when the pod's required node constraints (selector, affinity, namespace selector) hold on `node`. */
export function fitsRequiredNodeAffinity(pod: PodInfo, node: NodeInfo): boolean {
  return new RequiredNodeAffinity(pod).match(node);
}

/**
 * Filter on `spec.nodeSelector`, required node affinity and the namespace node selector;
 * Score by preferred node affinity terms (upstream NodeAffinity).
 */
export class NodeAffinity implements FilterScorePlugin {
  readonly name = NODE_AFFINITY;
  private readonly addedRequired?: NodeSelectorMatcher;
  private readonly addedPreferred?: PreferredSchedulingTerms;

  constructor(args: NodeAffinityArgs = {}) {
    const req = args.addedAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    if (req) this.addedRequired = new NodeSelectorMatcher(req);
    const pref = args.addedAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
    if (pref?.length) this.addedPreferred = new PreferredSchedulingTerms(pref);
  }

  preFilter(state: CycleState, pod: PodInfo): Status | PreFilterResult {
    const required = new RequiredNodeAffinity(pod);
    if (required.isEmpty() && !this.addedRequired) return Status.skip();
    state.writeImmutable(PRE_FILTER_KEY, required);
    const names = preFilterNodeNames(pod.pod.spec.affinity?.nodeAffinity);
    if (!names) return Status.success();
    if (names.size === 0) return Status.unresolvable(ERR_REASON_CONFLICT);
    return new PreFilterResult(names);
  }

  filter(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): Status {
    if (this.addedRequired && !this.addedRequired.matches(nodeInfo.name, nodeInfo.labels)) return REJECT_ENFORCED;
    const required = state.readImmutable<RequiredNodeAffinity>(PRE_FILTER_KEY) ?? new RequiredNodeAffinity(pod);
    return required.match(nodeInfo) ? Status.success() : REJECT_POD;
  }

  preScore(state: CycleState, pod: PodInfo): Status {
    const terms = pod.pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    if (terms.length === 0 && !this.addedPreferred) return Status.skip();
    state.writeImmutable(PRE_SCORE_KEY, new PreferredSchedulingTerms(terms));
    return Status.success();
  }

  score(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): number | Status {
    const preferred =
      state.readImmutable<PreferredSchedulingTerms>(PRE_SCORE_KEY) ?? new PreferredSchedulingTerms(pod.pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []);
    return preferred.score(nodeInfo) + (this.addedPreferred?.score(nodeInfo) ?? 0);
  }

  normalizeScore(_state: CycleState, _pod: PodInfo, _nodes: readonly NodeInfo[], scores: number[]): Status {
    defaultNormalizeScore(scores, false);
    return Status.success();
  }

  eventsToRegister(): ClusterEventWithHint[] {
    const hint = (pod: Pod, _old: unknown, newObj: unknown): QueueingHint => {
      const node = newObj as Node;
      const ni = new NodeInfo(node);
      if (this.addedRequired && !this.addedRequired.matches(ni.name, ni.labels)) return 'QueueSkip';
      return fitsRequiredNodeAffinity(new PodInfo(pod), ni) ? 'Queue' : 'QueueSkip';
    };
    return [
      { event: Events.NodeAdd, hint },
      { event: { resource: 'Node', action: ActionType.UpdateNodeLabel, label: 'NodeLabelChange' }, hint },
      // The namespace's node-selector annotation changed.
      { event: { resource: 'Namespace', action: ActionType.UpdateOther, label: 'NamespaceNodeSelectorChange' } },
    ];
  }
}

/** Validates NodeAffinityArgs: addedAffinity is an object with valid selector terms. */
export function validateNodeAffinityArgs(args: unknown, path: string): FieldError[] {
  if (typeof args !== 'object' || args === null) return [FieldError.typeInvalid(path, args, 'must be an object')];
  const a = args as NodeAffinityArgs;
  const errs: FieldError[] = [];
  const terms = a.addedAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (a.addedAffinity?.requiredDuringSchedulingIgnoredDuringExecution && !terms?.length) {
    errs.push(FieldError.required(`${path}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`, 'must have at least one node selector term'));
  }
  (a.addedAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).forEach((t, i) => {
    if (!(t.weight >= 1 && t.weight <= 100)) errs.push(FieldError.invalid(`${path}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}].weight`, t.weight, 'must be in the range 1-100'));
  });
  return errs;
}

export const nodeAffinityRegistration: PluginRegistration = {
  factory: (args) => new NodeAffinity((args ?? {}) as NodeAffinityArgs),
  validateArgs: validateNodeAffinityArgs,
};
