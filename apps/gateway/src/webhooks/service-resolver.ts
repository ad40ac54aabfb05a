import { StatusError } from '@orch/apimachinery';
import type { Endpoints, Service } from '@orch/api';
import type { GenericStore } from '../registry/generic-store';

/** Where to connect for a Service port: an endpoint address (or the external name) and its port. */
export interface ResolvedService {
  host: string;
  port: number;
  /** The TLS server name the service's certificate is checked against: `<name>.<namespace>.svc`. */
  serverName: string;
}

/**
 * Resolves `<namespace>/<name>:<port>` of a Service to one of its ready endpoints (upstream
 * aggregator routing; webhooks here use the same: pods are reachable from the gateway on their
 * own addresses). ExternalName services resolve to their external name. 503 when nothing is ready.
 */
export class ServiceResolver {
  constructor(private readonly stores: { services: () => GenericStore; endpoints: () => GenericStore }) {}

  async resolve(namespace: string, name: string, port: number): Promise<ResolvedService> {
    const serverName = `${name}.${namespace}.svc`;
    let svc: Service;
    try {
      svc = (await this.stores.services().get(namespace, name)) as Service;
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) throw StatusError.serviceUnavailable(`service "${namespace}/${name}" not found`);
      throw err;
    }
    if (svc.spec?.type === 'ExternalName' && svc.spec.externalName) return { host: svc.spec.externalName, port, serverName };
    const sp = (svc.spec?.ports ?? []).find((p) => p.port === port);
    if (!sp) throw StatusError.serviceUnavailable(`service "${namespace}/${name}" has no port ${port}`);
    let eps: Endpoints;
    try {
      eps = (await this.stores.endpoints().get(namespace, name)) as Endpoints;
    } catch (err) {
      if (err instanceof StatusError && err.code === 404) throw StatusError.serviceUnavailable(`no endpoints available for service "${namespace}/${name}"`);
      throw err;
    }
    const candidates = (eps.subsets ?? []).flatMap((s) => {
      const p = (s.ports ?? []).find((x) => (x.name ?? '') === (sp.name ?? '')) ?? (s.ports?.length === 1 ? s.ports[0] : undefined);
      return p ? (s.addresses ?? []).map((a) => ({ host: a.ip, port: p.port })) : [];
    });
    if (candidates.length === 0) throw StatusError.serviceUnavailable(`no endpoints available for service "${namespace}/${name}"`);
    const pick = candidates[Math.floor(Math.random() * candidates.length)];
    return { ...pick, serverName };
  }
}
