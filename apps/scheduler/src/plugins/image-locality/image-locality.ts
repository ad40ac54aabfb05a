import type { CycleState } from '../../framework/cycle-state';
import { MAX_NODE_SCORE, type Handle, type PluginFactory, type PreScorePlugin, type ScorePlugin } from '../../framework/interface';
import { Status } from '../../framework/status';
import type { NodeInfo, PodInfo } from '../../framework/types';
import { normalizedImageName } from '../../framework/types';
import { IMAGE_LOCALITY } from '../names';

const MB = 1024 * 1024;
/** Below this total size the score is 0 (upstream minThreshold). */
export const MIN_THRESHOLD = 23 * MB;
/** Per container, above this the score is 100 (upstream maxContainerThreshold). */
export const MAX_CONTAINER_THRESHOLD = 1000 * MB;

/** The pod's images present somewhere in the cluster, each with the fraction of nodes that have it. */
export interface PodImages {
  images: Array<{ name: string; spread: number }>;
  numContainers: number;
}

/** Collects the pod's (init and regular) container images that some node has. */
export function podImages(pod: PodInfo, imageNumNodes: ReadonlyMap<string, number>, totalNodes: number): PodImages {
  const containers = [...(pod.pod.spec.initContainers ?? []), ...(pod.pod.spec.containers ?? [])];
  const images: PodImages['images'] = [];
  for (const c of containers) {
    if (!c.image || totalNodes === 0) continue;
    const name = normalizedImageName(c.image);
    const n = imageNumNodes.get(name);
    if (n) images.push({ name, spread: n / totalNodes });
  }
  return { images, numContainers: containers.length };
}

/**
 * upstream sumImageScores + calculatePriority: the sizes of the pod's images already on the
 * node, each scaled by the fraction of nodes that have it (so rare images don't herd pods),
 * mapped linearly from [23MB, 1000MB × containers] to [0, 100].
 */
export function imageLocalityScore(p: PodImages, node: NodeInfo): number {
  let sum = 0;
  for (const img of p.images) {
    const size = node.imageSizes.get(img.name);
    if (size !== undefined) sum += Math.trunc(size * img.spread);
  }
  const max = MAX_CONTAINER_THRESHOLD * p.numContainers;
  const clamped = Math.min(Math.max(sum, MIN_THRESHOLD), max);
  return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (max - MIN_THRESHOLD));
}

const PRE_SCORE_KEY = `PreScore${IMAGE_LOCALITY}`;

/** Score: prefers nodes that already have the pod's images (upstream ImageLocality). */
export class ImageLocality implements PreScorePlugin, ScorePlugin {
  readonly name = IMAGE_LOCALITY;

  constructor(private readonly handle: Handle) {}

  /** Skips pods none of whose images is on any node (every node would score 0). */
  preScore(state: CycleState, pod: PodInfo): Status {
    const snap = this.handle.snapshot();
    const images = podImages(pod, snap.imageNumNodes, snap.numNodes());
    if (images.images.length === 0) return Status.skip();
    state.writeImmutable(PRE_SCORE_KEY, images);
    return Status.success();
  }

  score(state: CycleState, pod: PodInfo, nodeInfo: NodeInfo): number {
    const images = state.readImmutable<PodImages>(PRE_SCORE_KEY);
    if (!images) {
      const snap = this.handle.snapshot();
      return imageLocalityScore(podImages(pod, snap.imageNumNodes, snap.numNodes()), nodeInfo);
    }
    return imageLocalityScore(images, nodeInfo);
  }
}

export const newImageLocality: PluginFactory = (_args, handle) => new ImageLocality(handle);
