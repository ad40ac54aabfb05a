// Names of the in-tree plugins (upstream plugins/names). Configuration files use these.
export const PRIORITY_SORT = 'PrioritySort';
export const NODE_NAME = 'NodeName';
export const NODE_UNSCHEDULABLE = 'NodeUnschedulable';
export const TAINT_TOLERATION = 'TaintToleration';
export const NODE_AFFINITY = 'NodeAffinity';
export const NODE_RESOURCES_FIT = 'NodeResourcesFit';
export const NODE_RESOURCES_BALANCED_ALLOCATION = 'NodeResourcesBalancedAllocation';
export const IMAGE_LOCALITY = 'ImageLocality';
export const POD_TOPOLOGY_SPREAD = 'PodTopologySpread';
export const INTER_POD_AFFINITY = 'InterPodAffinity';
export const DEFAULT_PREEMPTION = 'DefaultPreemption';
export const DEFAULT_BINDER = 'DefaultBinder';
