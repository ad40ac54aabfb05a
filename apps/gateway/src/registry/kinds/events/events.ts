import type { eventsV1 } from '@orch/api';
import { FieldError } from '@orch/apimachinery';
import type { Served, Strategy } from '../../strategy';
import { createOnUpdateStrategy, defineKind } from '../binding';

type Event = Served<eventsV1.Event>;

const NOTE_MAX_BYTES = 1024;
const DEPRECATED = ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount', 'deprecatedSource'] as const;

/** SPEC "Event resource (events.orch.io/v1)": the rules of a new event. */
export function validateNewEvent(e: Event): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['action', 'reason', 'reportingController', 'reportingInstance'] as const) {
    if (!e[f]) errs.push(FieldError.required(f, ''));
  }
  if (!e.eventTime) errs.push(FieldError.required('eventTime', ''));
  if (e.type !== 'Normal' && e.type !== 'Warning') errs.push(FieldError.notSupported('type', e.type ?? '', ['Normal', 'Warning']));
  if (typeof e.note === 'string' && Buffer.byteLength(e.note) > NOTE_MAX_BYTES) errs.push(FieldError.tooLong('note', '', NOTE_MAX_BYTES));
  for (const f of DEPRECATED) {
    const v = e[f] as { component?: string; host?: string } | number | string | undefined;
    const set = f === 'deprecatedSource' ? !!v && typeof v === 'object' && (v.component || v.host) : v !== undefined && v !== null && v !== 0;
    if (set) errs.push(FieldError.forbidden(f, 'deprecated field is not permitted in new events'));
  }
  if (e.series && !(e.series.count >= 2)) errs.push(FieldError.invalid('series.count', e.series.count, 'should be at least 2'));
  return errs;
}

/** events.orch.io/v1 Events: creation rules checked; PUT creates (upstream). */
export const eventsV1Strategy: Strategy<Event> = {
  ...createOnUpdateStrategy,
  validate: (e) => validateNewEvent(e),
  validateUpdate(e, old) {
    const errs: FieldError[] = [];
    for (const f of ['action', 'reason', 'reportingController', 'reportingInstance', 'type', 'regarding', 'related', 'note', 'eventTime'] as const) {
      if (JSON.stringify(e[f]) !== JSON.stringify(old[f])) errs.push(FieldError.invalid(f, e[f], 'field is immutable'));
    }
    return errs;
  },
};

/** events.orch.io/v1 Events (stored as core Events). */
export const events = defineKind<eventsV1.Event>({
  group: 'events.orch.io',
  resource: 'events',
  strategy: eventsV1Strategy,
  fields: ['regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'reportingController', 'type'],
});

