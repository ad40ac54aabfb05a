import type { coreV1 } from '@orch/api';
import { FieldError, humanDuration, parseTime } from '@orch/apimachinery';
import type { Served, StatusStrategy, Strategy } from '../../strategy';
import { STATUS, col, defineKind, handled, part, resetExcept } from '../binding';
import { age, orNone } from '../table-cells';

type Pod = Served<coreV1.Pod>;

const DEFAULT_GRACE_SECONDS = 30;

/** Fields an ephemeral container may not have (upstream validateEphemeralContainers). */
const EPHEMERAL_FORBIDDEN = ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resources', 'resizePolicy', 'restartPolicy'];

/** Absent, null, or an empty list or object (what clients send for "not set"). */
function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'object' && Object.keys(v).length === 0);
}

/**
 * pods/ephemeralcontainers (upstream ValidatePodEphemeralContainersUpdate): ephemeral
 * containers may only be added, each with a name no other container of the pod has and an
 * image, without ports, probes, lifecycle or resources, targeting an existing container.
 */
export function validateEphemeralContainers(pod: Pod, old: Pod): FieldError[] {
  const errs: FieldError[] = [];
  const list = pod.spec?.ephemeralContainers ?? [];
  if (!Array.isArray(list)) return [FieldError.typeInvalid('spec.ephemeralContainers', list, 'must be a list')];
  const regular = new Set([...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].map((c) => c.name));
  const seen = new Set<string>();
  list.forEach((c, i) => {
    const at = `spec.ephemeralContainers[${i}]`;
    if (!c?.name) errs.push(FieldError.required(`${at}.name`, ''));
    else if (regular.has(c.name) || seen.has(c.name)) errs.push(FieldError.duplicate(`${at}.name`, c.name));
    else if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(c.name)) errs.push(FieldError.invalid(`${at}.name`, c.name, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"));
    seen.add(c?.name ?? '');
    if (!c?.image) errs.push(FieldError.required(`${at}.image`, ''));
    for (const f of EPHEMERAL_FORBIDDEN) if (!isEmpty((c as unknown as Record<string, unknown>)?.[f])) errs.push(FieldError.forbidden(`${at}.${f}`, 'cannot be set for an Ephemeral Container'));
    const target = c?.targetContainerName;
    if (target !== undefined && !regular.has(target)) errs.push(FieldError.notSupported(`${at}.targetContainerName`, target, [...regular].filter(Boolean)));
  });
  for (const prev of old.spec?.ephemeralContainers ?? []) {
    const now = list.find((c) => c?.name === prev.name);
    if (!now) errs.push(FieldError.forbidden('spec.ephemeralContainers', `existing ephemeral containers "${prev.name}" may not be removed`));
    else if (JSON.stringify(now) !== JSON.stringify(prev)) errs.push(FieldError.forbidden('spec.ephemeralContainers', `existing ephemeral containers "${prev.name}" may not be changed`));
  }
  return errs;
}

/** The parts of a pod spec an update may change (upstream ValidatePodUpdate). */
function mutableSpecStripped(spec: coreV1.PodSpec | undefined): unknown {
  const s = structuredClone(spec ?? ({} as Partial<coreV1.PodSpec>));
  const strip = (cs?: coreV1.Container[]) => cs?.forEach((c) => delete c.image);
  strip(s.containers);
  strip(s.initContainers);
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.terminationGracePeriodSeconds;
  return s;
}

/** At least one container, each named once. */
function validateContainers(pod: Pod): FieldError[] {
  const errs: FieldError[] = [];
  const containers = pod.spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [FieldError.required('spec.containers', '')];
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    if (!c.name) errs.push(FieldError.required(`spec.containers[${i}].name`, ''));
    else if (seen.has(c.name)) errs.push(FieldError.duplicate(`spec.containers[${i}].name`, c.name));
    seen.add(c.name ?? '');
  });
  return errs;
}

const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

export const podStrategy: Strategy<Pod> = {
  nameRule: 'dns1123Subdomain',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate(pod) {
    pod.status = { phase: 'Pending' };
  },
  /** Ephemeral containers change only through pods/ephemeralcontainers. */
  prepareForUpdate(pod, old) {
    const before = old.spec?.ephemeralContainers;
    if (!pod.spec) return;
    if (before === undefined) delete pod.spec.ephemeralContainers;
    else pod.spec.ephemeralContainers = before;
  },
  validate: (pod) => validateContainers(pod),
  validateUpdate(pod, old) {
    const errs = validateContainers(pod);
    if (JSON.stringify(mutableSpecStripped(pod.spec)) !== JSON.stringify(mutableSpecStripped(old.spec))) errs.push(FieldError.forbidden('spec', POD_UPDATE_FORBIDDEN));
    return errs;
  },
  /** Scheduled, unfinished pods wait for their node agent to stop them (graceful deletion). */
  gracePeriodSeconds(pod, options) {
    if (!pod.spec?.nodeName) return 0;
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 0;
    return options.gracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  },
};

/** pods/ephemeralcontainers writes spec.ephemeralContainers, nothing else. */
export const ephemeralContainersWrites: StatusStrategy<Pod> = {
  prepareForUpdate(obj, old) {
    resetExcept(obj, old, (incoming, reset) => {
      const list = incoming.spec?.ephemeralContainers;
      reset.spec = { ...(reset.spec as coreV1.PodSpec) };
      if (list === undefined) delete reset.spec.ephemeralContainers;
      else reset.spec.ephemeralContainers = list;
    });
  },
  validateUpdate: (obj, old) => validateEphemeralContainers(obj, old),
};

/** pods/binding writes spec.nodeName and the PodScheduled condition, nothing else. */
const bindingWrites: StatusStrategy<Pod> = {
  prepareForUpdate(obj, old) {
    resetExcept(obj, old, (incoming, reset) => {
      reset.spec = { ...(reset.spec as coreV1.PodSpec), nodeName: incoming.spec?.nodeName };
      reset.status = { ...(reset.status ?? {}), conditions: incoming.status?.conditions };
    });
  },
};

/** Pod status as kubectl shows it (upstream printPod's reason rules, condensed). */
export function podStatusReason(pod: Pod): string {
  const st = pod.status ?? {};
  let reason: string = st.reason || st.phase || 'Unknown';
  let initializing = false;
  (st.initContainerStatuses ?? []).forEach((c, i) => {
    if (initializing) return;
    const term = c.state?.terminated;
    if (term && term.exitCode === 0) return;
    initializing = true;
    if (term) reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${(pod.spec?.initContainers ?? []).length}`;
  });
  if (!initializing) {
    let running = false;
    for (const c of [...(st.containerStatuses ?? [])].reverse()) {
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
      else if (c.state?.terminated) reason = c.state.terminated.signal ? `Signal:${c.state.terminated.signal}` : `ExitCode:${c.state.terminated.exitCode}`;
      else if (c.ready && c.state?.running) running = true;
    }
    if (reason === 'Completed' && running) reason = (st.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
  }
  if (pod.metadata.deletionTimestamp) reason = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

function podRestarts(pod: Pod): string {
  let restarts = 0;
  let last: number | undefined;
  for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    restarts += c.restartCount ?? 0;
    const finished = c.lastState?.terminated?.finishedAt;
    if (finished) {
      const t = parseTime(finished);
      if (t !== undefined && (last === undefined || t > last)) last = t;
    }
  }
  return last !== undefined && restarts > 0 ? `${restarts} (${humanDuration(Date.now() - last)} ago)` : String(restarts);
}

/** core/v1 Pods. */
export const pods = defineKind<coreV1.Pod>({
  group: '',
  resource: 'pods',
  strategy: podStrategy,
  fields: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  subresources: {
    attach: handled('attach'),
    binding: { serve: 'podBinding', writes: bindingWrites },
    ephemeralcontainers: part(ephemeralContainersWrites),
    eviction: handled('eviction'),
    exec: handled('exec'),
    log: handled('log'),
    portforward: handled('portforward'),
    proxy: handled('podProxy'),
    status: STATUS,
  },
  table: {
    columns: [col('Name'), col('Ready'), col('Status'), col('Restarts'), col('Age'), col('IP', 'string', 1), col('Node', 'string', 1), col('Nominated Node', 'string', 1), col('Readiness Gates', 'string', 1)],
    cells: (p) => {
      const statuses = p.status?.containerStatuses ?? [];
      const total = Array.isArray(p.spec?.containers) ? p.spec.containers.length : 0;
      const gates = p.spec?.readinessGates ?? [];
      const gatesReady = gates.filter((g) => (p.status?.conditions ?? []).some((c) => c.type === g.conditionType && c.status === 'True')).length;
      return [
        p.metadata.name,
        `${statuses.filter((c) => c.ready).length}/${total}`,
        podStatusReason(p),
        podRestarts(p),
        age(p.metadata.creationTimestamp),
        orNone(p.status?.podIP),
        orNone(p.spec?.nodeName),
        orNone(p.status?.nominatedNodeName),
        gates.length ? `${gatesReady}/${gates.length}` : '<none>',
      ];
    },
  },
});
