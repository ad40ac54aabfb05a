import { Injectable } from '@nestjs/common';
import { AdmissionPluginProvider, handling, type AdmissionAttributes, type AdmissionPlugin } from '../../pipeline/admit';
import { StateAdmissionPlugin } from '../admission-state';
import type { AdmittedPod, Toleration } from '../api';

export const DEFAULT_TOLERATION_SECONDS_PLUGIN = 'DefaultTolerationSeconds';

/** NoExecute taint the node lifecycle controller puts on a node whose Ready condition is False. */
export const TAINT_NOT_READY = 'node.orch.io/not-ready';
/** NoExecute taint the node lifecycle controller puts on a node whose Ready condition is Unknown. */
export const TAINT_UNREACHABLE = 'node.orch.io/unreachable';
/** upstream --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds. */
export const DEFAULT_TOLERATION_SECONDS = 300;

/**
 * upstream DefaultTolerationSeconds' check: some toleration names `key` (or no key) with
 * effect NoExecute (or no effect); operator and value are not looked at.
 */
function tolerates(tolerations: readonly Toleration[], key: string): boolean {
  return tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === 'NoExecute'));
}

/**
 * A pod
 * being created that does not already tolerate `node.orch.io/not-ready:NoExecute` or
 * `node.orch.io/unreachable:NoExecute` gets `{key, operator: Exists, effect: NoExecute,
 * tolerationSeconds: 300}` for each, so it is evicted 5 minutes after its node fails.
 * Mutates `pod`; idempotent.
 */
export function addDefaultTolerations(pod: Pick<AdmittedPod, 'spec'>, seconds: { notReady: number; unreachable: number } = { notReady: DEFAULT_TOLERATION_SECONDS, unreachable: DEFAULT_TOLERATION_SECONDS }): void {
  const current = (pod.spec?.tolerations ?? []) as Toleration[];
  const added: Toleration[] = [];
  for (const [key, s] of [[TAINT_NOT_READY, seconds.notReady], [TAINT_UNREACHABLE, seconds.unreachable]] as const) {
    if (!tolerates(current, key)) added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: s });
  }
  if (added.length === 0) return;
  pod.spec = { ...(pod.spec ?? {}), tolerations: [...current, ...added] };
}

/**
 * DefaultTolerationSeconds (upstream plugin of the same name): pods being created get the
 * not-ready and unreachable NoExecute tolerations (--default-not-ready-toleration-seconds,
 * --default-unreachable-toleration-seconds; 300 s) unless they tolerate those taints already.
 */
@AdmissionPluginProvider()
@Injectable()
export class DefaultTolerationSeconds extends StateAdmissionPlugin implements AdmissionPlugin {
  readonly name = DEFAULT_TOLERATION_SECONDS_PLUGIN;

  readonly handles = handling({ CREATE: ['pods'] });

  mutate(a: AdmissionAttributes): void {
    if (!a.object) return;
    addDefaultTolerations(a.object as AdmittedPod, {
      notReady: this.state.options['default-not-ready-toleration-seconds'],
      unreachable: this.state.options['default-unreachable-toleration-seconds'],
    });
  }
}
