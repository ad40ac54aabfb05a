import type { PluginSet } from '../framework/config';
import type { Registry } from '../framework/interface';
import { newDefaultBinder } from './default-binder/default-binder';
import { defaultPreemptionRegistration } from './default-preemption/default-preemption';
import { newImageLocality } from './image-locality/image-locality';
import { interPodAffinityRegistration } from './inter-pod-affinity/inter-pod-affinity';
import * as names from './names';
import { nodeAffinityRegistration } from './node-affinity/node-affinity';
import { newNodeName } from './node-name/node-name';
import { balancedAllocationRegistration } from './node-resources/balanced-allocation';
import { nodeResourcesFitRegistration } from './node-resources/fit';
import { newNodeUnschedulable } from './node-unschedulable/node-unschedulable';
import { podTopologySpreadRegistration } from './pod-topology-spread/pod-topology-spread';
import { newPrioritySort } from './priority-sort/priority-sort';
import { newTaintToleration } from './taint-toleration/taint-toleration';

/** The in-tree plugins by name (upstream plugins/registry.go). */
export const inTreeRegistry: Registry = Object.freeze({
  [names.PRIORITY_SORT]: { factory: newPrioritySort },
  [names.NODE_NAME]: { factory: newNodeName },
  [names.NODE_UNSCHEDULABLE]: { factory: newNodeUnschedulable },
  [names.TAINT_TOLERATION]: { factory: newTaintToleration },
  [names.NODE_AFFINITY]: nodeAffinityRegistration,
  [names.NODE_RESOURCES_FIT]: nodeResourcesFitRegistration,
  [names.NODE_RESOURCES_BALANCED_ALLOCATION]: balancedAllocationRegistration,
  [names.IMAGE_LOCALITY]: { factory: newImageLocality },
  [names.POD_TOPOLOGY_SPREAD]: podTopologySpreadRegistration,
  [names.INTER_POD_AFFINITY]: interPodAffinityRegistration,
  [names.DEFAULT_PREEMPTION]: defaultPreemptionRegistration,
  [names.DEFAULT_BINDER]: { factory: newDefaultBinder },
});

/**
 * The default plugins, enabled at multiPoint in this order with upstream's score weights
 * (upstream getDefaultPlugins, without the volume and port plugins).
 */
export const defaultPlugins: PluginSet = Object.freeze({
  enabled: [
    { name: names.PRIORITY_SORT },
    { name: names.NODE_UNSCHEDULABLE },
    { name: names.NODE_NAME },
    { name: names.TAINT_TOLERATION, weight: 3 },
    { name: names.NODE_AFFINITY, weight: 2 },
    { name: names.NODE_RESOURCES_FIT, weight: 1 },
    { name: names.POD_TOPOLOGY_SPREAD, weight: 2 },
    { name: names.INTER_POD_AFFINITY, weight: 2 },
    { name: names.DEFAULT_PREEMPTION },
    { name: names.NODE_RESOURCES_BALANCED_ALLOCATION, weight: 1 },
    { name: names.IMAGE_LOCALITY, weight: 1 },
    { name: names.DEFAULT_BINDER },
  ],
});
