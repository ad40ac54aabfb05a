import { defineKind } from '../binding';

/** core/v1 Bindings (virtual): a create binds a pod to a node, as pods/binding. */
export const bindings = defineKind({ group: '', resource: 'bindings', virtual: 'podBinding' });
