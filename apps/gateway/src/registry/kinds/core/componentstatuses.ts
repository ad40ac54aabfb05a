import { defineKind } from '../binding';

/** core/v1 ComponentStatuses (virtual, deprecated): the store's health, read only. */
export const componentStatuses = defineKind({ group: '', resource: 'componentstatuses', virtual: 'componentStatuses' });
