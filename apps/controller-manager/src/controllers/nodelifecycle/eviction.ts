import { toleratesTaint } from '../cluster-common/taints';
import type { Taint, Toleration } from '../../framework/api';

/**
 * When the NoExecute taint manager evicts a pod (upstream processPodOnNode): at once (0)
 * when some NoExecute taint is not tolerated; otherwise, per taint, its add time plus the
 * `tolerationSeconds` of the first toleration matching it (negative counts as 0), the
 * earliest of these; undefined when every taint is tolerated without a time limit (or there
 * is no NoExecute taint). `addedAt` gives a taint's add time in ms.
 */
export function evictionTime(taints: readonly Taint[], tolerations: readonly Toleration[], addedAt: (t: Taint) => number): number | undefined {
  let earliest: number | undefined;
  for (const taint of taints) {
    if (taint.effect !== 'NoExecute') continue;
    const toleration = tolerations.find((t) => toleratesTaint(t, taint));
    if (!toleration) return 0;
    if (toleration.tolerationSeconds === undefined || toleration.tolerationSeconds === null) continue;
    const at = addedAt(taint) + Math.max(0, toleration.tolerationSeconds) * 1000;
    earliest = earliest === undefined ? at : Math.min(earliest, at);
  }
  return earliest;
}
