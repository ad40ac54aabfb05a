import type { ControllerDescriptor } from '../framework/controller';
import { CLUSTER_CONTROLLERS } from './cluster';
import { WORKLOAD_CONTROLLERS } from './workloads';

/**
 * Every controller of the controller-manager, by its `--controllers` name. Each lives in its
 * own folder under controllers/ with its spec.
 */
export const CONTROLLERS: ControllerDescriptor[] = [...WORKLOAD_CONTROLLERS, ...CLUSTER_CONTROLLERS];
