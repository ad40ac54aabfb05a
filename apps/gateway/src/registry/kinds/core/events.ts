import type { coreV1 } from '@orch/api';
import type { KubeObject } from '@orch/apimachinery';
import type { Served } from '../../strategy';
import { col, createOnUpdateStrategy, defineKind, fieldsFrom } from '../binding';
import { age } from '../table-cells';

type Event = Served<coreV1.Event>;

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
export function coreEventFields(e: Event): Record<string, string> {
  const reporting = typeof e.reportingComponent === 'string' ? e.reportingComponent : '';
  return { ...involvedObjectFields(e as KubeObject), reportingComponent: reporting, source: e.source?.component || reporting };
}

/** core/v1 Events: PUT creates (upstream). */
export const events = defineKind<coreV1.Event>({
  group: '',
  resource: 'events',
  strategy: createOnUpdateStrategy,
  fields: coreEventFields,
  table: {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Subobject', 'string', 1), col('Source', 'string', 1), col('Message'), col('First Seen', 'string', 1), col('Count', 'integer', 1), col('Name', 'string', 1)],
    cells: (e) => {
      const last = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
      const first = e.firstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
      const obj = e.involvedObject ?? {};
      const source = e.source?.component ? `${e.source.component}${e.source.host ? `, ${e.source.host}` : ''}` : (e.reportingComponent ?? '');
      return [age(last), e.type ?? '', e.reason ?? '', `${String(obj.kind ?? '').toLowerCase()}/${obj.name ?? ''}`, obj.fieldPath ?? '', source, e.message ?? '', age(first), e.series?.count ?? e.count ?? 1, e.metadata.name];
    },
  },
});
