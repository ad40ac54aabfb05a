import { FieldError } from '@orch/apimachinery';
import type { KubeObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { fieldsFrom, resetExcept } from './common';

interface Container {
  name?: string;
  image?: string;
  [k: string]: unknown;
}
interface PodLike extends KubeObject {
  spec?: {
    nodeName?: string;
    containers?: Container[];
    initContainers?: Container[];
    ephemeralContainers?: Container[];
    terminationGracePeriodSeconds?: number;
    activeDeadlineSeconds?: number;
    tolerations?: unknown[];
    [k: string]: unknown;
  };
  status?: { phase?: string; [k: string]: unknown };
}

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
export function validateEphemeralContainers(pod: PodLike, old: PodLike): FieldError[] {
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
    for (const f of EPHEMERAL_FORBIDDEN) if (!isEmpty(c?.[f])) errs.push(FieldError.forbidden(`${at}.${f}`, 'cannot be set for an Ephemeral Container'));
    const target = c?.targetContainerName as string | undefined;
    if (target !== undefined && !regular.has(target)) errs.push(FieldError.notSupported(`${at}.targetContainerName`, target, [...regular].filter(Boolean) as string[]));
  });
  for (const prev of old.spec?.ephemeralContainers ?? []) {
    const now = list.find((c) => c?.name === prev.name);
    if (!now) errs.push(FieldError.forbidden('spec.ephemeralContainers', `existing ephemeral containers "${prev.name}" may not be removed`));
    else if (JSON.stringify(now) !== JSON.stringify(prev)) errs.push(FieldError.forbidden('spec.ephemeralContainers', `existing ephemeral containers "${prev.name}" may not be changed`));
  }
  return errs;
}

/** The parts of a pod spec an update may change (upstream ValidatePodUpdate). */
function mutableSpecStripped(spec: PodLike['spec']): unknown {
  const s = structuredClone(spec ?? {});
  const strip = (cs?: Container[]) => cs?.forEach((c) => delete c.image);
  strip(s.containers);
  strip(s.initContainers);
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.terminationGracePeriodSeconds;
  return s;
}

export const podStrategy: Strategy = {
  nameRule: 'dns1123Subdomain',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate(obj) {
    (obj as PodLike).status = { phase: 'Pending' };
  },
  /** Ephemeral containers change only through pods/ephemeralcontainers. */
  prepareForUpdate(obj, old) {
    const pod = obj as PodLike;
    const before = (old as PodLike).spec?.ephemeralContainers;
    if (!pod.spec) return;
    if (before === undefined) delete pod.spec.ephemeralContainers;
    else pod.spec.ephemeralContainers = before;
  },
  validate(obj) {
    const pod = obj as PodLike;
    const errs: FieldError[] = [];
    if (!Array.isArray(pod.spec?.containers) || pod.spec!.containers.length === 0) {
      errs.push(FieldError.required('spec.containers', ''));
    } else {
      const seen = new Set<string>();
      pod.spec!.containers.forEach((c, i) => {
        if (!c.name) errs.push(FieldError.required(`spec.containers[${i}].name`, ''));
        else if (seen.has(c.name)) errs.push(FieldError.duplicate(`spec.containers[${i}].name`, c.name));
        seen.add(c.name ?? '');
      });
    }
    return errs;
  },
  validateUpdate(obj, old) {
    const errs = podStrategy.validate!(obj, { user: { username: '', groups: [] }, namespace: '', dryRun: false, warnings: [] });
    if (JSON.stringify(mutableSpecStripped((obj as PodLike).spec)) !== JSON.stringify(mutableSpecStripped((old as PodLike).spec))) {
      errs.push(
        FieldError.forbidden(
          'spec',
          'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
        ),
      );
    }
    return errs;
  },
  fieldAttributes: fieldsFrom([
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ]),
  subresources: {
    /** pods/ephemeralcontainers writes spec.ephemeralContainers, nothing else. */
    ephemeralcontainers: {
      prepareForUpdate(obj, old) {
        resetExcept(obj, old, (incoming, reset) => {
          const pod = reset as PodLike;
          const list = (incoming as PodLike).spec?.ephemeralContainers;
          pod.spec = { ...(pod.spec ?? {}) };
          if (list === undefined) delete pod.spec.ephemeralContainers;
          else pod.spec.ephemeralContainers = list;
        });
      },
      validateUpdate: (obj, old) => validateEphemeralContainers(obj as PodLike, old as PodLike),
    },
    /** pods/binding writes spec.nodeName and the PodScheduled condition, nothing else. */
    binding: {
      prepareForUpdate(obj, old) {
        resetExcept(obj, old, (incoming, reset) => {
          const pod = reset as PodLike;
          pod.spec = { ...(pod.spec ?? {}), nodeName: (incoming as PodLike).spec?.nodeName };
          pod.status = { ...(pod.status ?? {}), conditions: (incoming as PodLike).status?.conditions };
        });
      },
    },
  },
  /** Scheduled, unfinished pods wait for their node agent to stop them (graceful deletion). */
  gracePeriodSeconds(obj, options) {
    const pod = obj as PodLike;
    if (!pod.spec?.nodeName) return 0;
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 0;
    return options.gracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  },
};
