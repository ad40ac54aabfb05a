import { Quantity } from '@orch/apimachinery';
import type { Container, Pod, ResourceList } from './api';

// Resource amounts as plain numbers (upstream framework.Resource): cpu in millicores, memory
// and ephemeral storage in bytes, extended/hugepages resources ("scalar") in their units.

export const CPU = 'cpu';
export const MEMORY = 'memory';
export const EPHEMERAL_STORAGE = 'ephemeral-storage';
export const PODS = 'pods';

/** Requests assumed for scoring when a container does not state cpu (millicores) or memory (bytes). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** Names that are not scalar resources: the four native ones and `storage`. */
const NON_SCALAR = new Set([CPU, MEMORY, EPHEMERAL_STORAGE, PODS, 'storage']);

/** upstream IsScalarResourceName (extended, hugepages-*, attachable-volumes-*, prefixed native). */
export function isScalarResourceName(name: string): boolean {
  return !NON_SCALAR.has(name);
}

/** upstream IsExtendedResourceName: a domain-qualified name outside the native domains. */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/')) return false;
  if (name.startsWith('requests.')) return false;
  const domain = name.slice(0, name.indexOf('/'));
  return !(domain === 'orch.io' || domain.endsWith('.orch.io') || domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io'));
}

/** The field of {@link Resource} that holds each native resource; other names are scalar. */
const NATIVE_FIELDS: ReadonlyMap<string, 'milliCPU' | 'memory' | 'ephemeralStorage' | 'allowedPodNumber'> = new Map([
  [CPU, 'milliCPU'],
  [MEMORY, 'memory'],
  [EPHEMERAL_STORAGE, 'ephemeralStorage'],
  [PODS, 'allowedPodNumber'],
]);

/** A mutable resource vector. */
export class Resource {
  milliCPU = 0;
  memory = 0;
  ephemeralStorage = 0;
  allowedPodNumber = 0;
  /** Extended and hugepages resources; absent until one is added. */
  scalar: Map<string, number> | undefined = undefined;

  /** Parses a ResourceList (`{cpu: '500m', memory: '1Gi', ...}`); unparsable values count as 0. */
  static fromList(list: ResourceList | undefined): Resource {
    const r = new Resource();
    if (list) for (const name of Object.keys(list)) r.addQuantity(name, quantityOf(name, list[name]));
    return r;
  }

  /** Adds `amount` (already in this vector's units) of `name`. */
  addQuantity(name: string, amount: number): void {
    const field = NATIVE_FIELDS.get(name);
    if (field !== undefined) {
      this[field] += amount;
    } else if (isScalarResourceName(name)) {
      this.scalar ??= new Map();
      this.scalar.set(name, (this.scalar.get(name) ?? 0) + amount);
    }
  }

  /** The amount of `name` (0 when absent). */
  get(name: string): number {
    const field = NATIVE_FIELDS.get(name);
    return field !== undefined ? this[field] : (this.scalar?.get(name) ?? 0);
  }

  /** this += sign × other. */
  add(other: Resource, sign = 1): void {
    this.milliCPU += sign * other.milliCPU;
    this.memory += sign * other.memory;
    this.ephemeralStorage += sign * other.ephemeralStorage;
    this.allowedPodNumber += sign * other.allowedPodNumber;
    if (other.scalar) {
      this.scalar ??= new Map();
      for (const [k, v] of other.scalar) this.scalar.set(k, (this.scalar.get(k) ?? 0) + sign * v);
    }
  }

  /** this = max(this, other), per resource. */
  setMax(other: Resource): void {
    this.milliCPU = Math.max(this.milliCPU, other.milliCPU);
    this.memory = Math.max(this.memory, other.memory);
    this.ephemeralStorage = Math.max(this.ephemeralStorage, other.ephemeralStorage);
    this.allowedPodNumber = Math.max(this.allowedPodNumber, other.allowedPodNumber);
    if (other.scalar) {
      this.scalar ??= new Map();
      for (const [k, v] of other.scalar) this.scalar.set(k, Math.max(this.scalar.get(k) ?? 0, v));
    }
  }

  clone(): Resource {
    const r = new Resource();
    r.milliCPU = this.milliCPU;
    r.memory = this.memory;
    r.ephemeralStorage = this.ephemeralStorage;
    r.allowedPodNumber = this.allowedPodNumber;
    r.scalar = this.scalar && new Map(this.scalar);
    return r;
  }

  /** True when nothing at all is requested. */
  isZero(): boolean {
    if (this.milliCPU !== 0 || this.memory !== 0 || this.ephemeralStorage !== 0) return false;
    if (this.scalar) for (const v of this.scalar.values()) if (v !== 0) return false;
    return true;
  }
}

/** The amount of one ResourceList entry in Resource units: millicores for cpu, the integer value otherwise. */
export function quantityOf(name: string, value: string | number | undefined): number {
  if (value === undefined) return 0;
  try {
    const q = Quantity.parse(value);
    return name === CPU ? q.milliValue() : q.value();
  } catch {
    return 0;
  }
}

function containerRequests(c: Container, nonZero: boolean): Resource {
  const requests = c.resources?.requests;
  const r = Resource.fromList(requests);
  if (nonZero) {
    // upstream NonMissingContainerRequests: defaults apply only where the request is absent.
    if (requests?.[CPU] === undefined) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
    if (requests?.[MEMORY] === undefined) r.memory = DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

/**
 * upstream resourcehelper.PodRequests: the sum of the containers' requests, raised to the
 * largest init container (each counted with the sidecars started before it), sidecars
 * (init containers with restartPolicy Always) added to the total, plus the pod overhead.
 * With `nonZero`, a container without a cpu or memory request counts as requesting the
 * scoring defaults (100m, 200Mi).
 */
export function computePodRequests(pod: Pod, nonZero = false): Resource {
  const total = new Resource();
  for (const c of pod.spec.containers ?? []) total.add(containerRequests(c, nonZero));
  const sidecars = new Resource();
  const initMax = new Resource();
  for (const c of pod.spec.initContainers ?? []) {
    const req = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      total.add(req);
      sidecars.add(req);
      initMax.setMax(sidecars);
    } else {
      req.add(sidecars);
      initMax.setMax(req);
    }
  }
  total.setMax(initMax);
  if (pod.spec.overhead) total.add(Resource.fromList(pod.spec.overhead));
  return total;
}
