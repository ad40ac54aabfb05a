import { request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { canonicalGroup, type Catalog, type ResourceDef, type apiregistrationV1 } from '@orch/api';
import { resourceDefs, type APIResourceList } from '@orch/client';
import { StatusError } from '@orch/apimachinery';
import type { FrontProxyPki, UserInfo } from '@orch/auth';
import type { Logger } from '@orch/server-common';
import type { ObjectCache } from '../admission/object-cache';
import type { GroupPriorities } from '../discovery/discovery';
import { hashOf, type RemoteDocument } from '../openapi/service';
import type { GenericStore } from '../registry/generic-store';
import { nowTime } from '../registry/object-meta';
import type { RequestContext, Served } from '../registry/strategy';
import { readResponseBody } from '../webhooks/response-body';
import type { ServiceResolver } from '../webhooks/service-resolver';

/** apiregistration.orch.io/v1 APIService, as served: its spec always there; a local one (served by the gateway itself) has no service. */
export type APIService = Served<Omit<apiregistrationV1.APIService, 'spec'>> & { spec: Omit<apiregistrationV1.APIServiceSpec, 'service'> & { service?: apiregistrationV1.ServiceReference | null } };

/** Label of the APIServices the gateway registers for its own group versions (upstream kube-aggregator.kubernetes.io/automanaged). */
export const AUTOMANAGED_LABEL = 'kube-aggregator.orch.io/automanaged';

/** Idle limit of the gateway's own requests to an extension server (discovery checks, OpenAPI). */
const GATEWAY_REQUEST_TIMEOUT_MS = 5000;
/** The identity the gateway itself uses towards extension servers (discovery checks, OpenAPI). */
const AGGREGATOR_USER: UserInfo = { username: 'system:kube-aggregator', groups: ['system:masters'] };
const RECHECK_AVAILABLE_MS = 30_000;
const RECHECK_FAILING_MIN_MS = 500;
const RECHECK_FAILING_MAX_MS = 30_000;

/** Request headers never passed on to an extension server (credentials, identity headers a client could forge, hop-by-hop). */
const DROPPED_HEADERS = new Set(['authorization', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length']);

export interface AggregatorDeps {
  apiServices: ObjectCache<APIService>;
  apiServiceStore: () => GenericStore;
  catalog: Catalog;
  services: ServiceResolver;
  frontProxy: FrontProxyPki;
  systemContext: () => RequestContext;
  logger: Logger;
}

/** What the replica knows of one remote APIService. */
export interface Remote {
  apiService: APIService;
  /** The last check passed: requests are proxied (else 503). */
  available: boolean;
  /** The catalog entries registered from its discovery document (while Available). */
  defs: ResourceDef[];
  timer?: NodeJS.Timeout;
  failures: number;
  /** Bumped when the spec changes: a check started for an older spec drops its result. */
  specVersion: number;
  /** Its OpenAPI v3 documents (`apis/<group>/<version>` of its group version), fetched after each passed check. */
  openapi: RemoteDocument[];
}

/**
 * API aggregation on one gateway replica (upstream kube-aggregator): a group/version with an
 * APIService that names a Service is proxied to that Service's endpoints, with the caller's
 * identity in X-Remote-User/-Group/-Extra-* and the gateway's front-proxy client certificate,
 * the extension's serving certificate checked against the APIService's caBundle (unless
 * insecureSkipTLSVerify). Each remote APIService is checked (its `/apis/<group>/<version>`)
 * and reports Available; while available, its resources are in the catalog (so in discovery,
 * aggregated discovery and the controller-manager's view). APIServices without a Service are
 * served locally and always Available; the gateway registers one for each of its own group
 * versions (automanaged).
 */
export class Aggregator {
  private readonly remotes = new Map<string, Remote>();
  private unsubscribe?: () => void;
  private debounce?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly deps: AggregatorDeps) {}

  start(): void {
    this.unsubscribe = this.deps.apiServices.onChange(() => this.soon());
    this.soon();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.debounce);
    for (const r of this.remotes.values()) clearTimeout(r.timer);
  }

  /** Another part of the gateway changed what it serves (a CRD): re-check the automanaged APIServices. */
  servedChanged(): void {
    this.soon();
  }

  /** Discovery order from the APIServices: the highest groupPriorityMinimum of a group, a version's versionPriority. */
  readonly priorities: GroupPriorities = {
    group: (group) => {
      let best: number | undefined;
      for (const a of this.deps.apiServices.list()) if (canonicalGroup(a.spec?.group ?? '') === group && a.spec.groupPriorityMinimum !== undefined) best = Math.max(best ?? -Infinity, a.spec.groupPriorityMinimum);
      return best;
    },
    version: (group, version) => this.deps.apiServices.list().find((a) => canonicalGroup(a.spec?.group ?? '') === group && a.spec.version === version)?.spec.versionPriority,
  };

  /** Group versions of remote APIServices whose extension server is not (yet) Available: discovery still lists them, as stale. */
  unavailable(): { group: string; version: string }[] {
    const out: { group: string; version: string }[] = [];
    for (const r of this.remotes.values()) {
      const { group, version } = r.apiService.spec;
      if (!r.available && group && version) out.push({ group: canonicalGroup(group), version });
    }
    return out;
  }

  /** The remote APIService that serves a group/version (either spelling of a `*.k8s.io`/`*.orch.io` group), if any. */
  remoteFor(group: string, version: string): Remote | undefined {
    const wanted = canonicalGroup(group);
    // By its spec, not its name: stock extensions register `v1beta1.metrics.k8s.io` and the like.
    for (const r of this.remotes.values()) if (r.apiService.spec.version === version && canonicalGroup(r.apiService.spec.group ?? '') === wanted) return r;
    return undefined;
  }

  private soon(): void {
    if (this.stopped) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.reconcile(), 50);
    this.debounce.unref?.();
  }

  private async reconcile(): Promise<void> {
    const all = this.deps.apiServices.list();
    const remote = new Map(all.filter((a) => a.spec?.service?.name).map((a) => [a.metadata.name!, a]));
    for (const [name, r] of this.remotes) {
      if (remote.has(name)) continue;
      clearTimeout(r.timer);
      this.unregister(r);
      this.remotes.delete(name);
    }
    for (const [name, apiService] of remote) {
      const known = this.remotes.get(name);
      if (known && known.apiService.metadata.resourceVersion === apiService.metadata.resourceVersion) continue;
      const specChanged = !known || JSON.stringify(known.apiService.spec) !== JSON.stringify(apiService.spec);
      const r: Remote = known ?? { apiService, available: false, defs: [], failures: 0, specVersion: 0, openapi: [] };
      // Status writes (this replica's or another's) only refresh the object; a new spec is checked at once.
      r.apiService = apiService;
      this.remotes.set(name, r);
      if (!specChanged) continue;
      r.specVersion++;
      r.failures = 0;
      clearTimeout(r.timer);
      void this.check(r);
    }
    await this.autoregister(all).catch((err: unknown) => this.deps.logger.warn(`aggregation: registering local APIServices: ${(err as Error).message}`));
    for (const a of all) if (!a.spec?.service?.name) await this.setAvailable(a, { status: 'True', reason: 'Local', message: 'Local APIServices are always available' });
  }

  /** Local APIServices for every group version the gateway serves itself (built-in and CRDs); those of vanished CRDs go. */
  private async autoregister(existing: readonly APIService[]): Promise<void> {
    const byName = new Map(existing.map((a) => [a.metadata.name!, a]));
    const served = new Map<string, { group: string; version: string; crd: boolean }>();
    for (const def of this.deps.catalog.resources()) {
      if (def.aggregated || def.group === '') continue;
      served.set(`${def.version}.${def.group}`, { group: def.group, version: def.version, crd: !!def.custom });
    }
    const store = this.deps.apiServiceStore();
    for (const [name, gv] of served) {
      if (byName.has(name)) continue;
      const apiService: APIService = {
        apiVersion: 'apiregistration.orch.io/v1',
        kind: 'APIService',
        metadata: { name, labels: { [AUTOMANAGED_LABEL]: gv.crd ? 'true' : 'onstart' } },
        spec: { service: null, group: gv.group, version: gv.version, groupPriorityMinimum: gv.crd ? 1000 : 18000, versionPriority: gv.crd ? 100 : 15 },
      };
      await store.create('', apiService, this.deps.systemContext()).catch((e: unknown) => {
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      });
    }
    for (const a of existing) {
      if (a.metadata.labels?.[AUTOMANAGED_LABEL] !== 'true' || served.has(a.metadata.name!)) continue;
      await store.delete('', a.metadata.name!, {}, this.deps.systemContext()).catch((e: unknown) => {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      });
    }
  }

  /** Checks a remote APIService (Service, endpoints, discovery), records Available and its catalog entries, schedules the next check. */
  private async check(r: Remote): Promise<void> {
    if (this.stopped) return;
    const a = r.apiService;
    const specVersion = r.specVersion;
    let list: APIResourceList | undefined;
    let failed: { reason: string; message: string } | undefined;
    try {
      const res = await this.send(a, { method: 'GET', path: `/apis/${a.spec.group}/${a.spec.version}`, headers: { accept: 'application/json' }, idleTimeoutMs: GATEWAY_REQUEST_TIMEOUT_MS }, AGGREGATOR_USER);
      const body = await readResponseBody(res, 3 * 1024 * 1024);
      if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) failed = { reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${this.describe(a)}: bad status from ${this.describe(a)}: ${res.statusCode}` };
      else list = JSON.parse(body.toString('utf8')) as APIResourceList;
    } catch (err) {
      const message = (err as Error).message;
      // The resolver's StatusErrors say which part is missing (upstream reasons).
      const reason = !(err instanceof StatusError) ? 'FailedDiscoveryCheck' : /not found/.test(message) ? 'ServiceNotFound' : /has no port/.test(message) ? 'ServicePortError' : 'MissingEndpoints';
      failed = { reason, message: reason === 'FailedDiscoveryCheck' ? `failing or missing response from ${this.describe(a)}: ${message}` : message };
    }
    // Removed, or its spec changed meanwhile (that spec's own check is under way): this result is stale.
    if (this.remotes.get(a.metadata.name!) !== r || r.specVersion !== specVersion) return;
    if (failed || !list) {
      this.unregister(r);
      r.available = false;
      r.failures++;
      await this.setAvailable(r.apiService, { status: 'False', ...(failed ?? { reason: 'FailedDiscoveryCheck', message: 'no discovery document' }) });
    } else {
      r.failures = 0;
      r.available = true;
      this.register(r, list);
      await this.setAvailable(r.apiService, { status: 'True', reason: 'Passed', message: 'all checks passed' });
      await this.fetchOpenApi(r, specVersion);
    }
    if (this.stopped || this.remotes.get(a.metadata.name!) !== r || r.specVersion !== specVersion) return; // a newer check owns the timer
    const delay = r.failures === 0 ? RECHECK_AVAILABLE_MS : Math.min(RECHECK_FAILING_MAX_MS, RECHECK_FAILING_MIN_MS * 2 ** Math.min(r.failures, 10));
    r.timer = setTimeout(() => void this.check(r), delay);
    r.timer.unref?.();
  }

  private describe(a: APIService): string {
    const s = a.spec.service!;
    return `https://${s.name}.${s.namespace}.svc:${s.port ?? 443}/apis/${a.spec.group}/${a.spec.version}`;
  }

  private register(r: Remote, list: APIResourceList): void {
    const a = r.apiService;
    // The catalog keys groups by their orch name (`*.k8s.io` requests find them through canonicalGroup).
    const group = canonicalGroup(a.spec.group!);
    const version = a.spec.version!;
    const defs: ResourceDef[] = resourceDefs(group, version, list).map((def) => ({ ...def, aggregated: a.metadata.name }));
    if (JSON.stringify(defs) === JSON.stringify(r.defs)) return;
    this.unregister(r);
    for (const def of defs) this.deps.catalog.register(def);
    r.defs = defs;
  }

  private unregister(r: Remote): void {
    for (const def of r.defs) if (this.deps.catalog.lookup(def.group, def.version, def.resource) === def) this.deps.catalog.unregister(def.group, def.version, def.resource);
    r.defs = [];
    r.openapi = [];
  }

  /** The OpenAPI v3 documents of the available extension servers (merged into the gateway's `/openapi/v3`). */
  openApiDocuments(): RemoteDocument[] {
    return [...this.remotes.values()].flatMap((r) => (r.available ? r.openapi : []));
  }

  /**
   * Reads the extension server's `/openapi/v3` index and the documents of its APIService's group
   * version (`*.k8s.io` spellings of the group included), as the aggregator (upstream's OpenAPI
   * v3 aggregation controller does the same with its own identity). An extension that publishes
   * none keeps none; a failed read keeps the last documents.
   */
  private async fetchOpenApi(r: Remote, specVersion: number): Promise<void> {
    const a = r.apiService;
    const get = async (path: string): Promise<Buffer | undefined> => {
      const res = await this.send(a, { method: 'GET', path, headers: { accept: 'application/json' }, idleTimeoutMs: GATEWAY_REQUEST_TIMEOUT_MS }, AGGREGATOR_USER);
      const body = await readResponseBody(res, 32 * 1024 * 1024);
      return res.statusCode === 200 ? body : undefined;
    };
    try {
      const index = await get('/openapi/v3');
      const paths = index ? ((JSON.parse(index.toString('utf8')) as { paths?: Record<string, { serverRelativeURL?: string }> }).paths ?? {}) : {};
      const docs: RemoteDocument[] = [];
      for (const [key, entry] of Object.entries(paths)) {
        const m = /^apis\/([^/]+)\/([^/]+)$/.exec(key);
        if (!m || canonicalGroup(m[1]) !== canonicalGroup(a.spec.group!) || m[2] !== a.spec.version) continue;
        const body = await get(entry.serverRelativeURL ?? `/openapi/v3/${key}`);
        if (!body) continue;
        JSON.parse(body.toString('utf8')); // only JSON documents are published
        docs.push({ key, body, hash: hashOf(body) });
      }
      if (this.remotes.get(a.metadata.name!) === r && r.specVersion === specVersion && r.available) r.openapi = docs;
    } catch (err) {
      this.deps.logger.warn(`aggregation: OpenAPI v3 of APIService ${a.metadata.name}: ${(err as Error).message}`);
    }
  }

  private async setAvailable(a: APIService, cond: { status: string; reason: string; message: string }): Promise<void> {
    const have = a.status?.conditions?.find((c) => c.type === 'Available');
    if (have?.status === cond.status && have.reason === cond.reason && have.message === cond.message) return;
    const lastTransitionTime = have?.status === cond.status ? have.lastTransitionTime : nowTime();
    const conditions = [...(a.status?.conditions ?? []).filter((c) => c.type !== 'Available'), { type: 'Available', ...cond, lastTransitionTime }];
    try {
      await this.deps.apiServiceStore().update('', a.metadata.name!, { ...structuredClone(a), status: { conditions } } as APIService, this.deps.systemContext(), 'status');
    } catch (err) {
      // Another replica wrote it, or it went away: the next change looks again.
      if (!(err instanceof StatusError && (err.code === 409 || err.code === 404))) this.deps.logger.warn(`aggregation: status of APIService ${a.metadata.name}: ${(err as Error).message}`);
    }
  }

  /**
   * Opens a request to the extension server behind `a` as `user`: TLS to one of its Service's
   * endpoints, verified against caBundle under `<service>.<namespace>.svc` (unless
   * insecureSkipTLSVerify), with the front-proxy client certificate and the identity headers.
   */
  async send(a: APIService, opts: { method: string; path: string; headers: Record<string, string | string[]>; idleTimeoutMs?: number }, user: UserInfo, body?: Buffer): Promise<IncomingMessage> {
    const s = a.spec.service!;
    const target = await this.deps.services.resolve(s.namespace ?? 'default', s.name!, s.port ?? 443);
    const headers: Record<string, string | string[]> = { ...opts.headers, 'x-remote-user': user.username, 'x-remote-group': user.groups };
    for (const [k, v] of Object.entries(user.extra ?? {})) headers[`x-remote-extra-${encodeURIComponent(k).toLowerCase()}`] = v;
    if (body && body.length) headers['content-length'] = String(body.length);
    const options: RequestOptions = {
      host: target.host,
      port: target.port,
      method: opts.method,
      path: opts.path,
      headers,
      servername: target.serverName,
      ca: a.spec.caBundle ? Buffer.from(a.spec.caBundle, 'base64').toString('utf8') : undefined,
      rejectUnauthorized: !a.spec.insecureSkipTLSVerify,
      cert: this.deps.frontProxy.client.certPem,
      key: this.deps.frontProxy.client.keyPem,
    };
    return new Promise((resolve, reject) => {
      const req = request(options, resolve);
      req.on('error', reject);
      const idle = opts.idleTimeoutMs;
      if (idle) req.setTimeout(idle, () => req.destroy(new Error(`timed out after ${idle} ms`)));
      req.end(body);
    });
  }

  /**
   * Proxies a request to the extension server of `a` and streams the answer back as it comes
   * (watches included): 503 when the APIService is not available. Returns the HTTP status.
   */
  async proxy(remote: Remote, req: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body?: unknown; raw: NodeJS.EventEmitter }, reply: { hijack(): void; raw: import('node:http').ServerResponse }, user: UserInfo): Promise<number> {
    if (!remote.available) throw StatusError.serviceUnavailable(`service unavailable`);
    const a = remote.apiService;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      // HTTP/2 pseudo-headers (`:authority`, `:path`, ...) are not headers of the HTTP/1.1 request to the extension server.
      if (v === undefined || DROPPED_HEADERS.has(k) || k.startsWith('impersonate-') || k.startsWith('x-remote-') || k.startsWith(':')) continue;
      headers[k] = v;
    }
    const body = Buffer.isBuffer(req.body) ? req.body : undefined;
    let res: IncomingMessage;
    try {
      res = await this.send(a, { method: req.method, path: req.url, headers }, user, body);
    } catch (err) {
      if (err instanceof StatusError) throw err;
      throw StatusError.serviceUnavailable(`error trying to reach service: ${(err as Error).message}`);
    }
    reply.hijack();
    const out = reply.raw;
    const responseHeaders: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding') responseHeaders[k] = v;
    out.writeHead(res.statusCode ?? 502, responseHeaders);
    out.flushHeaders();
    // Chunks pass on as they arrive (a watch stays a stream); either side going away ends both.
    res.pipe(out);
    out.on('close', () => res.destroy());
    return res.statusCode ?? 502;
  }
}
