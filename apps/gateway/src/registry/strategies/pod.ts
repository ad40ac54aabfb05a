import { FieldError } from '@orch/apimachinery';
import type { KubeObject } from '@orch/apimachinery';
import type { Strategy } from '../strategy';
import { fieldsFrom, resetExcept } from './common';
import { addDefaultTolerations } from './default-tolerations';

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
    terminationGracePeriodSeconds?: number;
    activeDeadlineSeconds?: number;
    tolerations?: unknown[];
    [k: string]: unknown;
  };
  status?: { phase?: string; [k: string]: unknown };
}

const DEFAULT_GRACE_SECONDS = 30;

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
    addDefaultTolerations(obj as PodLike);
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
