import type { coreV1, Node } from '@orch/api';
import { FieldError, isQualifiedName } from '@orch/apimachinery';
import { STATUS, col, defineKind, validatedBy, handled } from '../binding';
import { age, orNone } from '../table-cells';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** upstream validateNodeTaints: every taint has a qualified-name key and a known effect. */
export function validateNodeTaints(node: Node): FieldError[] {
  const errs: FieldError[] = [];
  (node.spec?.taints ?? []).forEach((t, i) => {
    const at = `spec.taints[${i}]`;
    if (!t.key) errs.push(FieldError.required(`${at}.key`, ''));
    else errs.push(...isQualifiedName(t.key).map((m) => FieldError.invalid(`${at}.key`, t.key, m)));
    if (!t.effect) errs.push(FieldError.required(`${at}.effect`, ''));
    else if (!TAINT_EFFECTS.includes(t.effect)) errs.push(FieldError.notSupported(`${at}.effect`, t.effect, TAINT_EFFECTS));
  });
  return errs;
}

function nodeStatus(node: Node): string {
  const ready = (node.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const parts = [ready?.status === 'True' ? 'Ready' : 'NotReady'];
  if (ready === undefined) parts[0] = 'Unknown';
  if (node.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(node: Node): string {
  const roles = Object.keys(node.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.orch.io/'))
    .map((k) => k.slice('node-role.orch.io/'.length));
  return roles.length ? roles.join(',') : '<none>';
}

/** core/v1 Nodes: taints validated, proxied to their node agent. */
export const nodes = defineKind<coreV1.Node>({
  group: '',
  resource: 'nodes',
  strategy: validatedBy(validateNodeTaints),
  fields: ['spec.unschedulable'],
  subresources: { proxy: handled('nodeProxy'), status: STATUS },
  table: {
    columns: [col('Name'), col('Status'), col('Roles'), col('Age'), col('Version'), col('Internal-IP', 'string', 1), col('External-IP', 'string', 1), col('OS-Image', 'string', 1), col('Kernel-Version', 'string', 1), col('Container-Runtime', 'string', 1)],
    cells: (n) => {
      const addr = (t: string) => orNone((n.status?.addresses ?? []).find((a) => a.type === t)?.address);
      const info = n.status?.nodeInfo;
      return [n.metadata.name, nodeStatus(n), nodeRoles(n), age(n.metadata.creationTimestamp), info?.kubeletVersion ?? '', addr('InternalIP'), addr('ExternalIP'), orNone(info?.osImage), orNone(info?.kernelVersion), orNone(info?.containerRuntimeVersion)];
    },
  },
});
