import type { autoscalingV2 } from '@orch/api';
import type { Served } from '../../strategy';
import { STATUS, col, defineKind } from '../binding';
import { age } from '../table-cells';

type HorizontalPodAutoscaler = Served<autoscalingV2.HorizontalPodAutoscaler>;

/** An autoscaler's targets as kubectl shows them: `cpu: 85%/50%` per metric (`<unknown>` before the first measurement). */
function hpaTargets(h: HorizontalPodAutoscaler): string {
  const specs = h.spec?.metrics ?? [];
  const current = h.status?.currentMetrics ?? [];
  if (specs.length === 0) return '<none>';
  return specs
    .map((m, i) => {
      if (m.type !== 'Resource' || !m.resource) return `<${String(m.type).toLowerCase()}>`;
      const cur = current[i]?.resource?.current;
      const t = m.resource.target ?? {};
      if (t.type === 'Utilization') return `${m.resource.name}: ${cur?.averageUtilization !== undefined ? `${cur.averageUtilization}%` : '<unknown>'}/${t.averageUtilization}%`;
      return `${m.resource.name}: ${cur?.averageValue ?? '<unknown>'}/${t.averageValue ?? t.value}`;
    })
    .join(', ');
}

/** autoscaling HorizontalPodAutoscalers (v2, and v1 stored as v2). */
export const horizontalPodAutoscalers = defineKind<autoscalingV2.HorizontalPodAutoscaler>({
  group: 'autoscaling',
  resource: 'horizontalpodautoscalers',
  subresources: { status: STATUS },
  table: {
    columns: [col('Name'), col('Reference'), col('Targets'), col('MinPods', 'integer'), col('MaxPods', 'integer'), col('Replicas', 'integer'), col('Age')],
    cells: (h) => [h.metadata.name, `${h.spec?.scaleTargetRef?.kind ?? ''}/${h.spec?.scaleTargetRef?.name ?? ''}`, hpaTargets(h), h.spec?.minReplicas ?? 1, h.spec?.maxReplicas ?? 0, h.status?.currentReplicas ?? 0, age(h.metadata.creationTimestamp)],
  },
});
