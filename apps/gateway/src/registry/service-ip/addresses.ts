import { FieldError, StatusError } from '@orch/apimachinery';
import type { Logger } from '@orch/server-common';
import type { Store } from '@orch/storage';
import type { StrategyAllocation as Allocation } from '../strategy';
import { AllocationError, RangeAllocator, type ParentRef } from './allocator';
import { formatIPv4, ipOffset, type NodePortRange, type ServiceCidr } from './ranges';
import { CLUSTER_IP_NONE, needsClusterIP, needsHealthCheckNodePort, needsNodePorts, nodePortsOf, wantsClusterIP, type Service } from './service';

/** Store prefixes of the allocation records (not served by the API). */
export const IP_ADDRESS_PREFIX = '/registry/orch.io/ipaddresses/';
export const NODE_PORT_PREFIX = '/registry/orch.io/nodeports/';

export const NO_ALLOCATION: Allocation = { commit: async () => undefined, revert: async () => undefined };

export function parentRefOf(svc: Service): ParentRef {
  return { group: '', resource: 'services', namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '' };
}

/** A value reserved by one allocator. */
interface Held {
  allocator: RangeAllocator;
  value: string;
}

/**
 * Cluster IPs and node ports of services, kept in the store (see RangeAllocator). Used by
 * the service strategy around each write, and by the repair loop.
 */
export class ServiceAddresses {
  readonly ips: RangeAllocator;
  readonly ports: RangeAllocator;

  constructor(
    private readonly store: Store,
    readonly cidr: ServiceCidr,
    readonly nodePorts: NodePortRange,
    private readonly logger: Pick<Logger, 'warn' | 'error'>,
    random: () => number = Math.random,
  ) {
    this.ips = new RangeAllocator(
      store,
      {
        keyPrefix: IP_ADDRESS_PREFIX,
        bands: cidr,
        valueAt: (off) => formatIPv4(cidr.first + off),
        offsetOf: (ip) => ipOffset(cidr, ip),
        notInRange: (ip) => `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${cidr.cidr}`,
        allocatedMessage: 'provided IP is already allocated',
        apiVersion: 'networking.orch.io/v1',
        kind: 'IPAddress',
        labels: { 'ipaddress.orch.io/ip-family': 'IPv4', 'ipaddress.orch.io/managed-by': 'ipallocator.orch.io' },
      },
      random,
    );
    this.ports = new RangeAllocator(
      store,
      {
        keyPrefix: NODE_PORT_PREFIX,
        bands: nodePorts,
        valueAt: (off) => String(nodePorts.base + off),
        offsetOf: (p) => {
          const off = /^\d+$/.test(p) ? Number(p) - nodePorts.base : -1;
          return off >= 0 && off < nodePorts.size ? off : undefined;
        },
        notInRange: () => `provided port is not in the valid range. The range of valid ports is ${nodePorts.text}`,
        allocatedMessage: 'provided port is already allocated',
        apiVersion: 'v1',
        kind: 'NodePortAllocation',
      },
      random,
    );
  }

  /**
   * Reserves what svc needs and old (the stored object, on update) does not hold, and fills
   * in the values it was given: clusterIP/clusterIPs/ipFamilies, ports[].nodePort,
   * healthCheckNodePort. Ports with the same port number share one node port (upstream).
   * Validation has run; on failure everything reserved here is freed again and a
   * StatusError is thrown (422 for a requested value, 500 when a range is full).
   * With dryRun nothing is written.
   */
  async allocate(svc: Service, old: Service | undefined, dryRun: boolean): Promise<Allocation> {
    const owner = parentRefOf(svc);
    const reserved: Held[] = [];
    const keep = new Set<string>();
    const take = async (allocator: RangeAllocator, value: string | undefined, onError: (err: AllocationError) => StatusError): Promise<string> => {
      try {
        const v = value ?? (await allocator.allocateNext(owner, dryRun));
        if (value !== undefined) await allocator.allocate(value, owner, dryRun);
        reserved.push({ allocator, value: v });
        return v;
      } catch (err) {
        if (err instanceof AllocationError) throw onError(err);
        throw err;
      }
    };
    try {
      const spec = (svc.spec ??= {});
      // --- cluster IP
      if (needsClusterIP(svc)) spec.ipFamilies = ['IPv4'];
      if (wantsClusterIP(svc)) {
        const oldIP = old && wantsClusterIP(old) ? old.spec?.clusterIP : undefined;
        const requested = spec.clusterIPs?.[0] || spec.clusterIP || undefined;
        if (oldIP && requested === oldIP) {
          keep.add(`ip/${oldIP}`);
        } else {
          const ip = await take(this.ips, requested, (err) =>
            err.reason === 'full'
              ? StatusError.internal('failed to allocate a serviceIP: range is full')
              : invalid(svc, [FieldError.invalid('spec.clusterIPs', spec.clusterIPs ?? [requested], `failed to allocate IP ${requested}: ${err.message}`)]),
          );
          spec.clusterIP = ip;
          spec.clusterIPs = [ip];
        }
      } else if (needsClusterIP(svc)) {
        spec.clusterIPs = [CLUSTER_IP_NONE];
      }

      // --- node ports
      const oldPorts = new Set(old ? nodePortsOf(old) : []);
      const byPortNumber = new Map<number, number>();
      const ports = spec.ports ?? [];
      for (let i = 0; i < ports.length; i++) {
        const p = ports[i];
        if (!p.nodePort && !needsNodePorts(svc)) continue;
        const shared = byPortNumber.get(p.port ?? 0);
        if (shared !== undefined && (!p.nodePort || p.nodePort === shared)) {
          p.nodePort = shared;
          continue;
        }
        if (p.nodePort && (oldPorts.has(p.nodePort) || reserved.some((h) => h.allocator === this.ports && h.value === String(p.nodePort)))) {
          keep.add(`port/${p.nodePort}`);
        } else {
          const requested = p.nodePort ? String(p.nodePort) : undefined;
          const got = await take(this.ports, requested, (err) =>
            err.reason === 'full'
              ? StatusError.internal('failed to allocate a nodePort: range is full')
              : invalid(svc, [FieldError.invalid(`spec.ports[${i}].nodePort`, p.nodePort, err.message)]),
          );
          p.nodePort = Number(got);
        }
        byPortNumber.set(p.port ?? 0, p.nodePort);
      }

      // --- health-check node port
      if (needsHealthCheckNodePort(svc)) {
        const hc = spec.healthCheckNodePort || undefined;
        const oldHc = old?.spec?.healthCheckNodePort;
        if (hc && (hc === oldHc || oldPorts.has(hc))) {
          keep.add(`port/${hc}`);
        } else {
          const got = await take(this.ports, hc === undefined ? undefined : String(hc), (err) =>
            err.reason === 'full'
              ? StatusError.internal('failed to allocate a nodePort: range is full')
              : invalid(svc, [FieldError.invalid('spec.healthCheckNodePort', hc, err.message)]),
          );
          spec.healthCheckNodePort = Number(got);
        }
      }
    } catch (err) {
      if (!dryRun) await this.free(reserved, owner);
      throw err;
    }
    if (dryRun) return NO_ALLOCATION;

    // What old holds and the new object no longer uses is freed once the write succeeded.
    const stale: Held[] = [];
    if (old) {
      for (const h of this.held(old)) {
        const tag = `${h.allocator === this.ips ? 'ip' : 'port'}/${h.value}`;
        if (!keep.has(tag) && !reserved.some((r) => r.allocator === h.allocator && r.value === h.value)) stale.push(h);
      }
    }
    return {
      commit: () => this.free(stale, owner),
      revert: () => this.free(reserved, owner),
    };
  }

  /** Frees everything svc holds; for a service gone from the store. Never throws (repair catches what fails). */
  async release(svc: Service): Promise<void> {
    await this.free(this.held(svc), parentRefOf(svc));
  }

  /** The values svc holds in the ranges, as the store's records should show them. */
  held(svc: Service): Held[] {
    const out: Held[] = [];
    const ip = svc.spec?.clusterIP;
    if (wantsClusterIP(svc) && ip) out.push({ allocator: this.ips, value: ip });
    const ports = new Set(nodePortsOf(svc));
    if (svc.spec?.healthCheckNodePort) ports.add(svc.spec.healthCheckNodePort);
    for (const p of ports) out.push({ allocator: this.ports, value: String(p) });
    return out;
  }

  private async free(items: Held[], owner: ParentRef): Promise<void> {
    for (const h of items) {
      try {
        await h.allocator.release(h.value, owner);
      } catch (err) {
        this.logger.warn('could not release a service address; the repair loop will free it', { value: h.value, err: (err as Error).message });
      }
    }
  }
}

function invalid(svc: Service, errs: FieldError[]): StatusError {
  return StatusError.invalid('Service', '', svc.metadata.name ?? '', errs);
}
