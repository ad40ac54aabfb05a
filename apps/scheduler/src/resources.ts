import type { GroupVersionResource } from '@orch/client';

// The resources the scheduler reads and writes.
export const PODS: GroupVersionResource = { group: '', version: 'v1', resource: 'pods' };
export const NODES: GroupVersionResource = { group: '', version: 'v1', resource: 'nodes' };
export const NAMESPACES: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };
export const PRIORITY_CLASSES: GroupVersionResource = { group: 'scheduling.orch.io', version: 'v1', resource: 'priorityclasses' };
