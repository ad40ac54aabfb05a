import type { appsV1 } from '@orch/api';
import { defineKind } from '../binding';

/** apps/v1 ControllerRevisions: nothing special. */
export const controllerRevisions = defineKind<appsV1.ControllerRevision>({ group: 'apps', resource: 'controllerrevisions' });
