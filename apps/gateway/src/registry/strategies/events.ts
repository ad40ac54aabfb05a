import { FieldError } from '@orch/apimachinery';
import type { KubeObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { defaultStrategy, fieldsFrom } from './common';

type EventLike = KubeObject & Record<string, any>;

const NOTE_MAX_BYTES = 1024;
const DEPRECATED = ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount', 'deprecatedSource'] as const;

/** SPEC "Event resource (events.orch.io/v1)": the rules of a new event. */
export function validateNewEvent(e: EventLike): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['action', 'reason', 'reportingController', 'reportingInstance'] as const) {
    if (!e[f]) errs.push(FieldError.required(f, ''));
  }
  if (!e.eventTime) errs.push(FieldError.required('eventTime', ''));
  if (e.type !== 'Normal' && e.type !== 'Warning') errs.push(FieldError.notSupported('type', e.type ?? '', ['Normal', 'Warning']));
  if (typeof e.note === 'string' && Buffer.byteLength(e.note) > NOTE_MAX_BYTES) errs.push(FieldError.tooLong('note', '', NOTE_MAX_BYTES));
  for (const f of DEPRECATED) {
    const v = e[f];
    const set = f === 'deprecatedSource' ? v && (v.component || v.host) : v !== undefined && v !== null && v !== 0;
    if (set) errs.push(FieldError.forbidden(f, 'deprecated field is not permitted in new events'));
  }
  if (e.series && !(e.series.count >= 2)) errs.push(FieldError.invalid('series.count', e.series.count, 'should be at least 2'));
  return errs;
}

const involvedObjectFields = fieldsFrom([
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'type',
]);

/**
 * Field selectors of core v1 Events (upstream EventToSelectableFields): the involved object,
 * reason and type; `reportingComponent` is the reporting controller and `source` is
 * `source.component`, else the reporting controller (events written through events.orch.io).
 */
export function coreEventFields(obj: KubeObject): Record<string, string> {
  const e = obj as EventLike;
  const reporting = typeof e.reportingComponent === 'string' ? e.reportingComponent : '';
  return { ...involvedObjectFields(obj), reportingComponent: reporting, source: e.source?.component || reporting };
}

/** events.orch.io/v1 Events: creation rules checked; PUT creates (upstream). */
export const eventsV1Strategy: Strategy = {
  ...defaultStrategy,
  allowCreateOnUpdate: true,
  validate: (obj) => validateNewEvent(obj as EventLike),
  validateUpdate(obj, old) {
    const errs: FieldError[] = [];
    for (const f of ['action', 'reason', 'reportingController', 'reportingInstance', 'type', 'regarding', 'related', 'note', 'eventTime'] as const) {
      if (JSON.stringify((obj as EventLike)[f]) !== JSON.stringify((old as EventLike)[f])) errs.push(FieldError.invalid(f, (obj as EventLike)[f], 'field is immutable'));
    }
    return errs;
  },
  fieldAttributes: fieldsFrom(['regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'reportingController', 'type']),
};
