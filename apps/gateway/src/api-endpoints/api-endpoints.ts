import { networkInterfaces } from 'node:os';
import { mirrorUpstreamKeys } from '@orch/api';
import { StatusError, formatMicroTime, parseTime, type KubeObject } from '@orch/apimachinery';
import type { Logger } from '@orch/server-common';
import type { GenericStore } from '../registry/generic-store';
import { formatIPv4, type ServiceCidr } from '../registry/service-ip/ranges';
import type { RequestContext } from '../registry/strategy';

/** Where the Services in front of the API live (upstream: `default/kubernetes`). */
export const API_SERVICE_NAMESPACE = 'default';
/** Namespace of the gateways' endpoint leases. */
const LEASE_NAMESPACE = 'orch-system';
/** Label of a gateway's endpoint lease; its holderIdentity is `<ip>:<port>`. */
export const API_ENDPOINT_LEASE_LABEL = 'orch.io/apiserver-endpoint';
/** `endpointslice.orch.io/managed-by` of the slices the gateway keeps (the endpoint-slice controllers leave them alone). */
export const API_SLICE_MANAGER = 'gateway.orch.io';
/** Upstream's Endpoints label that keeps the mirroring controller away (the gateway writes the slices itself). */
const SKIP_MIRROR_LABEL = 'endpointslice.orch.io/skip-mirror';
const PORT_NAME = 'https';

export interface ApiServiceSpec {
  /** `orch`, and `kubernetes` under the compatibility option. */
  name: string;
  /** A fixed address of the service range (its first ones, as upstream). */
  clusterIP: string;
}

export interface ApiEndpointsOptions {
  services: ApiServiceSpec[];
  /** Port of the Services (upstream 443; the local profile uses the secure port so the userspace proxy binds it without root). */
  servicePort: number;
  /** This gateway's address and secure port, published as an endpoint. */
  address: string;
  port: number;
  /** Whether the `kubernetes.io` twins of the slice labels are written (compatibility option). */
  upstreamTwins: boolean;
  /** How often the lease is renewed and the endpoints reconciled (upstream 10 s). */
  intervalMs: number;
  /** A gateway whose lease is older than this is dropped from the endpoints (upstream 15 s). */
  leaseDurationSeconds: number;
}

export interface ApiEndpointsRegistries {
  services: GenericStore;
  endpoints: GenericStore;
  endpointSlices: GenericStore;
  leases: GenericStore;
}

type Obj = KubeObject & Record<string, any>;

/**
 * The Services in front of the API: `orch` on the first address of the service range and,
 * under the compatibility option, `kubernetes` on the second (stock in-cluster clients read
 * KUBERNETES_SERVICE_HOST).
 */
export function apiServiceSpecs(cidr: ServiceCidr, k8sCompatibility: boolean): ApiServiceSpec[] {
  return [{ name: 'orch', clusterIP: formatIPv4(cidr.first) }, ...(k8sCompatibility ? [{ name: 'kubernetes', clusterIP: formatIPv4(cidr.first + 1) }] : [])];
}

/** Names and addresses the serving certificate must carry for in-cluster clients of these Services. */
export function apiServiceServingHosts(specs: readonly ApiServiceSpec[]): string[] {
  return specs.flatMap((s) => [s.clusterIP, s.name, `${s.name}.default`, `${s.name}.default.svc`, `${s.name}.default.svc.cluster.local`]);
}

/**
 * The address the gateway advertises (upstream --advertise-address): the flag, else
 * --bind-address, else (0.0.0.0) the first non-loopback IPv4 address, else 127.0.0.1.
 */
export function advertiseAddress(flag: string, bindAddress: string): string {
  if (flag) return flag;
  if (bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::') return bindAddress;
  for (const list of Object.values(networkInterfaces())) {
    const v4 = list?.find((a) => a.family === 'IPv4' && !a.internal);
    if (v4) return v4.address;
  }
  return '127.0.0.1';
}

function isStatus(err: unknown, code: number): boolean {
  return err instanceof StatusError && err.code === code;
}

/** The lease name of a gateway endpoint: `orch-apiserver-10-0-0-1-6443`. */
export function endpointLeaseName(address: string, port: number): string {
  return `orch-apiserver-${address.replace(/[.:]/g, '-')}-${port}`;
}

/** The live gateway endpoints among the leases: holderIdentity `<ip>:<port>`, renewed within their duration. */
export function liveEndpoints(leases: readonly Obj[], now: number): { ip: string; port: number }[] {
  const out: { ip: string; port: number }[] = [];
  for (const l of leases) {
    const renew = l.spec?.renewTime ? parseTime(l.spec.renewTime) : 0;
    if (renew + (l.spec?.leaseDurationSeconds ?? 0) * 1000 <= now) continue;
    const m = /^(.+):(\d+)$/.exec(l.spec?.holderIdentity ?? '');
    if (m) out.push({ ip: m[1], port: Number(m[2]) });
  }
  return out.sort((a, b) => a.port - b.port || a.ip.localeCompare(b.ip));
}

/** The Service in front of the API (upstream kube-apiserver's `kubernetes` Service). */
export function apiService(spec: ApiServiceSpec, servicePort: number, targetPort: number): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: spec.name, namespace: API_SERVICE_NAMESPACE, labels: { component: 'apiserver', provider: 'orch' } },
    spec: { type: 'ClusterIP', clusterIP: spec.clusterIP, sessionAffinity: 'None', ports: [{ name: PORT_NAME, port: servicePort, protocol: 'TCP', targetPort }] },
  };
}

/** The Endpoints of an API Service: one subset per gateway port (gateways normally share one). */
export function apiEndpointsSubsets(endpoints: readonly { ip: string; port: number }[]): unknown[] {
  const byPort = new Map<number, string[]>();
  for (const e of endpoints) byPort.set(e.port, [...(byPort.get(e.port) ?? []), e.ip]);
  return [...byPort].map(([port, ips]) => ({ addresses: ips.map((ip) => ({ ip })), ports: [{ name: PORT_NAME, port, protocol: 'TCP' }] }));
}

/** The EndpointSlices of an API Service: one per gateway port, the first named after the Service. */
export function apiEndpointSlices(service: string, endpoints: readonly { ip: string; port: number }[], upstreamTwins: boolean): Obj[] {
  const byPort = new Map<number, string[]>();
  for (const e of endpoints) byPort.set(e.port, [...(byPort.get(e.port) ?? []), e.ip]);
  const labels: Record<string, string> = { 'orch.io/service-name': service, 'endpointslice.orch.io/managed-by': API_SLICE_MANAGER };
  mirrorUpstreamKeys(labels, upstreamTwins);
  return [...byPort].map(([port, ips], i) => ({
    apiVersion: 'discovery.orch.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: i === 0 ? service : `${service}-${port}`, namespace: API_SERVICE_NAMESPACE, labels: { ...labels } },
    addressType: 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false } })),
    ports: [{ name: PORT_NAME, port, protocol: 'TCP' }],
  }));
}

/**
 * Keeps the Services in front of the API (`default/orch`, and `default/kubernetes` under the
 * compatibility option) and their Endpoints and EndpointSlices, as kube-apiserver keeps
 * `default/kubernetes` with its lease endpoint reconciler: every gateway renews a Lease
 * (`orch-system/orch-apiserver-<ip>-<port>`) every interval, and the endpoints list the
 * gateways whose lease is live. A Service's cluster IP and port are restored when changed;
 * a Service removed is created again. A stopping gateway deletes its lease and takes itself
 * out of the endpoints. Failures are logged and retried at the next interval.
 */
export class ApiEndpointsReconciler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly registries: ApiEndpointsRegistries,
    private readonly opts: ApiEndpointsOptions,
    private readonly context: () => RequestContext,
    private readonly logger: Logger,
  ) {}

  /** Reconciles now, then every interval. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** Stops the loop, deletes this gateway's lease and removes it from the endpoints. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    try {
      await this.registries.leases.delete(LEASE_NAMESPACE, endpointLeaseName(this.opts.address, this.opts.port), {}, this.context());
      await this.reconcileEndpoints();
    } catch (err) {
      if (!isStatus(err, 404)) this.logger.warn('could not remove this gateway from the API endpoints', { err: (err as Error).message });
    }
  }

  private tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.reconcile()
      .catch((err) => this.logger.warn('API service reconcile failed; retrying', { err: (err as Error).message }))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** One pass: renew the lease, then the Services and their endpoints. */
  async reconcile(): Promise<void> {
    await this.renewLease();
    for (const s of this.opts.services) await this.ensureService(s);
    await this.reconcileEndpoints();
  }

  private async renewLease(): Promise<void> {
    const name = endpointLeaseName(this.opts.address, this.opts.port);
    const spec = { holderIdentity: `${this.opts.address}:${this.opts.port}`, leaseDurationSeconds: this.opts.leaseDurationSeconds, renewTime: formatMicroTime(Date.now() * 1000) };
    await this.upsert(this.registries.leases, LEASE_NAMESPACE, {
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: LEASE_NAMESPACE, labels: { [API_ENDPOINT_LEASE_LABEL]: 'true' } },
      spec,
    });
  }

  private async ensureService(s: ApiServiceSpec): Promise<void> {
    const want = apiService(s, this.opts.servicePort, this.opts.port);
    let current: Obj;
    try {
      current = (await this.registries.services.get(API_SERVICE_NAMESPACE, s.name)) as Obj;
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      try {
        await this.registries.services.create(API_SERVICE_NAMESPACE, want, this.context());
      } catch (e) {
        if (!isStatus(e, 409)) throw e;
      }
      return;
    }
    const port = current.spec?.ports?.[0];
    if (current.spec?.clusterIP === s.clusterIP && current.spec?.ports?.length === 1 && port?.port === this.opts.servicePort && port?.name === PORT_NAME && port?.protocol === 'TCP') return;
    // Changed by hand: the cluster IP cannot change in place, so the Service is made again.
    if (current.spec?.clusterIP !== s.clusterIP) {
      await this.registries.services.delete(API_SERVICE_NAMESPACE, s.name, { preconditions: { uid: current.metadata.uid } }, this.context());
      await this.registries.services.create(API_SERVICE_NAMESPACE, want, this.context());
      return;
    }
    await this.registries.services.update(API_SERVICE_NAMESPACE, s.name, { ...current, spec: { ...current.spec, ports: want.spec.ports } }, this.context());
  }

  private async reconcileEndpoints(): Promise<void> {
    const leases = (await this.registries.leases.list(LEASE_NAMESPACE, { labelSelector: `${API_ENDPOINT_LEASE_LABEL}=true` })).items as Obj[];
    const live = liveEndpoints(leases, Date.now());
    for (const s of this.opts.services) {
      await this.upsert(this.registries.endpoints, API_SERVICE_NAMESPACE, {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: s.name, namespace: API_SERVICE_NAMESPACE, labels: { [SKIP_MIRROR_LABEL]: 'true' } },
        subsets: apiEndpointsSubsets(live),
      } as Obj);
      const slices = apiEndpointSlices(s.name, live, this.opts.upstreamTwins);
      for (const slice of slices) await this.upsert(this.registries.endpointSlices, API_SERVICE_NAMESPACE, slice);
      const ours = (await this.registries.endpointSlices.list(API_SERVICE_NAMESPACE, { labelSelector: `orch.io/service-name=${s.name},endpointslice.orch.io/managed-by=${API_SLICE_MANAGER}` })).items;
      for (const old of ours) {
        if (slices.some((x) => x.metadata.name === old.metadata.name)) continue;
        await this.registries.endpointSlices.delete(API_SERVICE_NAMESPACE, old.metadata.name!, {}, this.context()).catch((err) => {
          if (!isStatus(err, 404)) throw err;
        });
      }
    }
  }

  /** Creates `want`, or replaces the stored object's content with it when it differs (labels merged). */
  private async upsert(registry: GenericStore, namespace: string, want: Obj): Promise<void> {
    const name = want.metadata.name!;
    let current: Obj | undefined;
    try {
      current = (await registry.get(namespace, name)) as Obj;
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
    if (!current) {
      try {
        await registry.create(namespace, want, this.context());
      } catch (err) {
        if (!isStatus(err, 409)) throw err;
      }
      return;
    }
    const { apiVersion: _a, kind: _k, metadata, ...content } = want;
    const labels = { ...(current.metadata.labels ?? {}), ...(metadata.labels ?? {}) };
    const same = JSON.stringify(labels) === JSON.stringify(current.metadata.labels ?? {}) && Object.entries(content).every(([k, v]) => JSON.stringify(current![k]) === JSON.stringify(v));
    if (same) return;
    try {
      await registry.update(namespace, name, { ...current, ...content, metadata: { ...current.metadata, labels } }, this.context());
    } catch (err) {
      // Another gateway wrote it meanwhile: the next pass sees its version.
      if (!isStatus(err, 409)) throw err;
    }
  }
}
