import type { IncomingMessage } from 'node:http';
import type { Http2ServerResponse, Http2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Catalog, FeatureGates, canonicalGroup, parseRuntimeConfig, type ResourceDef } from '@orch/api';
import { StatusError, type KubeObject } from '@orch/apimachinery';
import {
  BOOTSTRAP_CLUSTER_ROLES,
  BOOTSTRAP_CLUSTER_ROLE_BINDINGS,
  bootstrapRoles,
  bootstrapRoleBindings,
  ensureFrontProxyPki,
  issueClientCert,
  issueServingCert,
  reconcileDefault,
  writeAtomic,
  writeKubeconfig,
  type Authenticator,
  type Authorizer,
  type FrontProxyPki,
  type Pki,
  type ServiceAccountTokenIssuer,
} from '@orch/auth';
import { HealthChecks, createLogger, createMetricsRegistry, httpRequestMetrics, overHttp2, type Logger } from '@orch/server-common';
import { openEtcdStore, openSqliteStore, type Store } from '@orch/storage';
import { clusterIdentity, LocalBus, MemoryHistory, NatsBus, Pump, RedisHistory, storeLeaseLock, WatchCache, watchChannels, type EventHistory, type WatchBus } from '@orch/watch';
import { Aggregator, type APIService } from './aggregation/aggregator';
import { AuthenticationFailureLimit } from './authn/failure-limit';
import { publishAuthenticationConfigMap } from './aggregation/authentication-configmap';
import { requestedDeprecatedApisGauge } from './deprecation/deprecation';
import { CustomResourceConverter } from './apiextensions/conversion';
import { CustomResources } from './apiextensions/custom-resources';
import { crdRuleErrors, validationRulesFor } from './apiextensions/validation-rules';
import { Discovery } from './discovery/discovery';
import { FlowControl } from './flowcontrol/flow-control';
import type { FlowSchema, PriorityLevelConfiguration } from './flowcontrol/types';
import { ObjectCache } from './admission/object-cache';
import type { GatewayOptions } from './options';
import { GenericStore, type RegistryOptions } from './registry/generic-store';
import { NO_RULES, resolveKind, systemNamespaces } from './registry/kinds';
import { ApiEndpointsReconciler, advertiseAddress, apiServiceSpecs } from './api-endpoints/api-endpoints';
import { REPAIR_HEALTH_CHECK, ServiceAddresses, ServiceAddressRepair, serviceRangesFromFlags } from './registry/service-ip';
import { systemContext } from './registry/system-context';
import { OpenApiV3 } from './openapi/service';
import type { AdmissionChain } from './pipeline/admit';
import { Encoder } from './pipeline/encode';
import { MAX_REQUEST_BODY_BYTES } from './pipeline/media';
import { NonResourceEndpoints } from './pipeline/non-resource';
import { WatchStreams } from './pipeline/watch';
import { ApiHandler, toStatusError } from './server/api-handler';
import { API_METHODS, OTHER_METHODS, answerConnect, lingerOnClose, methodNotAllowed } from './server/edge';
import { NodeProxy } from './server/node-proxy';
import { SubresourceHandlers } from './server/subresources';
import { VirtualResources } from './server/virtual';
import { ServiceResolver } from './webhooks/service-resolver';
import { WebhookClient } from './webhooks/webhook-client';


/** Resolves the data directory: flag, then ORCH_DATA_DIR, then ./.orch. */
export function dataDir(opts: GatewayOptions): string {
  return resolve(opts['data-dir'] || process.env.ORCH_DATA_DIR || '.orch');
}

/**
 * The gateway's composition root: store, watch cache, catalog, one GenericStore per stored
 * resource, and the request handler. Created once per process; `close()` ends watches,
 * stops the cache and closes the store.
 */
export class Gateway {
  readonly health: HealthChecks;
  readonly logger: Logger;
  private handler!: ApiHandler;
  /** The composed authorization modes (set by `wire`; admission expressions' authorizer asks it). */
  authorizer?: Authorizer;
  private serviceAddressRepair?: ServiceAddressRepair;
  private apiEndpoints?: ApiEndpointsReconciler;
  private pump?: Pump;
  private customResources?: CustomResources;
  private flowControl?: FlowControl;
  private aggregator?: Aggregator;
  /** --authentication-failure-limit (set by `wire`; absent when 0): the request stage and the connection guard share it. */
  private authenticationFailures?: AuthenticationFailureLimit;
  /** The gateway's identity towards extension API servers (front-proxy CA and client certificate). */
  private frontProxy!: FrontProxyPki;
  private readonly caches: ObjectCache[] = [];
  /** Open HTTP/2 connections (--http2): shutdown sends each a GOAWAY, and destroys those left after the grace period. */
  readonly http2Sessions = new Set<Http2Session>();
  /** Calls webhooks (conversion; admission's may share it): HTTPS with the config's CA bundle, Services through their endpoints. */
  readonly webhooks: WebhookClient;

  private constructor(
    readonly options: GatewayOptions,
    readonly catalog: Catalog,
    readonly features: FeatureGates,
    readonly store: Store,
    readonly watchCache: WatchCache,
    readonly registries: Map<ResourceDef, GenericStore>,
    readonly pki: Pki,
  ) {
    this.logger = createLogger('gateway');
    this.health = new HealthChecks({ livezGracePeriodMs: options['livez-grace-period'] });
    this.webhooks = new WebhookClient(new ServiceResolver({ services: () => this.registry('', 'services'), endpoints: () => this.registry('', 'endpoints') }));
  }

  /** Opens everything the gateway needs; throws (start-up error) on bad flags. */
  static async create(options: GatewayOptions, pki: Pki): Promise<Gateway> {
    const features = new FeatureGates(options['feature-gates']);
    const catalog = new Catalog(undefined, parseRuntimeConfig(options['runtime-config']));
    if (!features.enabled('MutatingAdmissionPolicy')) {
      // upstream serves the alpha resources only when their gate is on as well
      for (const resource of ['mutatingadmissionpolicies', 'mutatingadmissionpolicybindings']) catalog.unregister('admissionregistration.orch.io', 'v1alpha1', resource);
    }
    const serviceRanges = serviceRangesFromFlags(options, features);
    const retention = options['watch-history-retention'];
    if (!options['watch-pump'] && !(options['nats-url'] || process.env.ORCH_NATS_URL)) throw new Error('--watch-pump=false needs --nats-url: a gateway on the in-process bus is its own pump');
    const store = await openStore(options, retention);
    const logger = createLogger('gateway');
    const log = (message: string) => logger.warn(message);
    const { bus, history } = await openWatchBackends(options, store, retention, logger);
    const watchCache = new WatchCache(store, { prefix: '/registry/', bus, history, log });
    await watchCache.start();
    const registryOptions: RegistryOptions = {
      continueTokenLifetimeMs: options['continue-token-lifetime'],
      tooLargeResourceVersionWaitMs: 3000,
      bookmarkIntervalMs: options['bookmark-interval'],
      watchListEnabled: features.enabled('WatchList'),
      consistentListFromCache: features.enabled('ConsistentListFromCache'),
      cacheFreshnessWaitMs: 250,
    };
    const registries = new Map<ResourceDef, GenericStore>();
    const gateway = new Gateway(options, catalog, features, store, watchCache, registries, pki);
    const serviceAddresses = new ServiceAddresses(store, serviceRanges.cidr, serviceRanges.nodePorts, gateway.logger);
    const kindDeps = { k8sCompatibility: options['k8s-group-aliases'], crdRuleCheck: crdRuleErrors, serviceAddresses };
    for (const def of catalog.resources()) {
      if (!def.virtual) registries.set(def, new GenericStore(def, resolveKind(def, kindDeps), store, watchCache, registryOptions));
    }
    for (const w of features.warnings) gateway.logger.warn(w);
    gateway.customResources = new CustomResources({
      catalog,
      registries,
      watchCache,
      crds: () => gateway.registry('apiextensions.orch.io', 'customresourcedefinitions'),
      newStore: (def, kind, converter) => new GenericStore(def, kind, store, watchCache, registryOptions, converter),
      converter: (def) => new CustomResourceConverter(def, def.custom!, gateway.webhooks, options['k8s-group-aliases']),
      rules: (def) => {
        const rules = validationRulesFor(def.custom!.schema);
        return rules.empty ? NO_RULES : rules;
      },
      systemContext,
      logger: gateway.logger,
      onServedChange: () => gateway.aggregator?.servedChanged(),
    });
    gateway.serviceAddressRepair = new ServiceAddressRepair(store, serviceAddresses, gateway.logger, { servicesPrefix: gateway.registry('', 'services').prefix('') });
    await gateway.bootstrap();
    gateway.frontProxy = await ensureFrontProxyPki(pki.dir);
    await publishAuthenticationConfigMap(gateway.registry('', 'configmaps'), pki.ca.certPem, gateway.frontProxy, systemContext());
    if (options['watch-pump']) {
      gateway.pump = createWatchPump(store, bus, history, { identity: `${hostname()}:${options['secure-port']}`, startPosition: () => watchCache.currentRevision(), log });
      gateway.pump.start();
    }
    gateway.serviceAddressRepair.start();
    gateway.customResources.start();
    gateway.apiEndpoints = new ApiEndpointsReconciler(
      {
        services: gateway.registry('', 'services'),
        endpoints: gateway.registry('', 'endpoints'),
        endpointSlices: gateway.registry('discovery.orch.io', 'endpointslices'),
        leases: gateway.registry('coordination.orch.io', 'leases'),
      },
      {
        services: apiServiceSpecs(serviceRanges.cidr, options['k8s-group-aliases']),
        servicePort: options['api-service-port'],
        address: advertiseAddress(options['advertise-address'], options['bind-address']),
        port: options['secure-port'],
        upstreamTwins: options['k8s-group-aliases'],
        intervalMs: 10_000,
        leaseDurationSeconds: 15,
      },
      systemContext,
      logger,
    );
    await gateway.apiEndpoints.start();
    return gateway;
  }

  /**
   * Builds the request pipeline from the composed authenticators, authorization modes and
   * admission plugins (PipelineComposer calls this once at start-up).
   */
  wire(parts: { authenticator: Authenticator; authorizer: Authorizer; admission: AdmissionChain; tokens: { issuer: ServiceAccountTokenIssuer; apiAudiences: string[] } }): void {
    this.authorizer = parts.authorizer;
    const metricsRegistry = createMetricsRegistry();
    this.health.add('log', () => undefined);
    // A slow store at start-up (etcd) does not fail livez during --livez-grace-period.
    this.health.add(
      this.store.backend,
      async () => {
        await this.store.currentRevision();
      },
      { livezGrace: true },
    );
    this.health.add('poststarthook/bootstrap-namespaces', () => undefined, { endpoints: ['healthz', 'readyz'] });
    // Ready only while the watch cache follows the feed (bus or store) without a failure.
    this.health.add(
      'watch-cache',
      () => {
        const status = this.watchCache.status();
        if (!status.ready) throw new Error(status.reason ?? 'watch cache not ready');
      },
      { endpoints: ['readyz'] },
    );
    this.health.add(
      REPAIR_HEALTH_CHECK,
      () => {
        if (!this.serviceAddressRepair?.synced) throw new Error('the first service address repair pass has not finished');
      },
      { endpoints: ['healthz', 'readyz'] },
    );
    const k8sAliases = this.options['k8s-group-aliases'];
    if (this.options['enable-priority-and-fairness']) this.flowControl = this.startFlowControl(metricsRegistry);
    this.aggregator = this.startAggregator();
    this.authenticationFailures = AuthenticationFailureLimit.fromFlags(this.options, { metrics: metricsRegistry, logger: this.logger });
    this.handler = new ApiHandler({
      authenticationFailures: this.authenticationFailures,
      flowControl: this.flowControl,
      aggregator: this.aggregator,
      maxInFlight: { readOnly: this.options['max-requests-inflight'], mutating: this.options['max-mutating-requests-inflight'] },
      catalog: this.catalog,
      registries: this.registries,
      requestMetrics: httpRequestMetrics(metricsRegistry),
      requestTimeoutMs: this.options['request-timeout'],
      deprecatedApis: requestedDeprecatedApisGauge(metricsRegistry),
      authenticator: parts.authenticator,
      authorizer: parts.authorizer,
      admission: parts.admission,
      encoder: new Encoder({ compression: this.features.enabled('APIResponseCompression') }),
      logger: this.logger,
      watches: new WatchStreams({ minRequestTimeoutSeconds: this.options['min-request-timeout'], maxWatchesPerUser: this.options['max-watches-per-user'], maxWatches: this.options['max-watches'] }),
      nonResource: new NonResourceEndpoints({ discovery: new Discovery(this.catalog, { k8sAliases, priorities: this.aggregator.priorities, unavailable: () => this.aggregator?.unavailable() ?? [] }), health: this.health, metricsRegistry, openapi: new OpenApiV3(this.catalog, { k8sAliases, remoteDocuments: () => this.aggregator?.openApiDocuments() ?? [] }), k8sAliases }),
      subresources: new SubresourceHandlers(new NodeProxy({ pki: this.pki }), parts.tokens),
      virtual: new VirtualResources({
        pods: () => this.registry('', 'pods'),
        authenticator: parts.authenticator,
        authorizer: parts.authorizer,
        apiAudiences: parts.tokens.apiAudiences,
        componentHealth: async () => {
          try {
            await this.store.currentRevision();
            return [{ name: `${this.store.backend}-0`, healthy: true, message: 'ok' }];
          } catch (e) {
            return [{ name: `${this.store.backend}-0`, healthy: false, message: (e as Error).message }];
          }
        },
      }),
      options: { anonymousAuth: this.options['anonymous-auth'], k8sAliases },
    });
  }

  /** API aggregation over this replica's cached APIServices. */
  private startAggregator(): Aggregator {
    const apiServices = new ObjectCache<APIService>(this.watchCache, this.registry('apiregistration.orch.io', 'apiservices'));
    this.caches.push(apiServices);
    const aggregator = new Aggregator({
      apiServices,
      apiServiceStore: () => this.registry('apiregistration.orch.io', 'apiservices'),
      catalog: this.catalog,
      services: new ServiceResolver({ services: () => this.registry('', 'services'), endpoints: () => this.registry('', 'endpoints') }),
      frontProxy: this.frontProxy,
      systemContext,
      logger: this.logger,
    });
    aggregator.start();
    return aggregator;
  }

  /** API Priority and Fairness over this replica's cached FlowSchemas and PriorityLevelConfigurations. */
  private startFlowControl(metricsRegistry: ReturnType<typeof createMetricsRegistry>): FlowControl {
    const group = 'flowcontrol.apiserver.orch.io';
    const flowSchemas = new ObjectCache<FlowSchema>(this.watchCache, this.registry(group, 'flowschemas'));
    const priorityLevels = new ObjectCache<PriorityLevelConfiguration>(this.watchCache, this.registry(group, 'prioritylevelconfigurations'));
    this.caches.push(flowSchemas, priorityLevels);
    const flowControl = new FlowControl({
      flowSchemas,
      priorityLevels,
      flowSchemaStore: () => this.registry(group, 'flowschemas'),
      priorityLevelStore: () => this.registry(group, 'prioritylevelconfigurations'),
      systemContext,
      metrics: metricsRegistry,
      logger: this.logger,
      objectCount: (apiGroup, resource) => {
        const group = canonicalGroup(apiGroup);
        for (const [def, store] of this.registries) if (def.group === group && def.resource === resource) return this.watchCache.count(store.prefix(''));
        return undefined;
      },
      options: {
        serverConcurrency: this.options['max-requests-inflight'] + this.options['max-mutating-requests-inflight'],
        // Upstream: a quarter of the 60 s request timeout.
        queueWaitMs: 15_000,
      },
    });
    void flowControl.start();
    return flowControl;
  }

  /** The GenericStore of a core or named-group resource (preferred version). */
  registry(group: string, resource: string): GenericStore {
    for (const [def, reg] of this.registries) if (def.group === group && def.resource === resource) return reg;
    throw new Error(`resource ${resource}.${group} is not served`);
  }

  /** Creates the system namespaces (idempotent). */
  private async bootstrap(): Promise<void> {
    const namespaces = this.registry('', 'namespaces');
    for (const name of systemNamespaces(this.options['k8s-group-aliases'])) {
      try {
        await namespaces.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, systemContext());
      } catch (err) {
        if (!(err instanceof StatusError && err.code === 409)) throw err;
      }
    }
    await this.reconcileBootstrapPolicy();
  }

  /**
   * The default RBAC policy (@orch/auth bootstrap-policy), reconciled at every start: missing
   * roles and bindings are created, missing rules and subjects added; what users changed
   * stays. Replicas starting together may race: a lost race is retried on the new state.
   */
  private async reconcileBootstrapPolicy(): Promise<void> {
    const sets: [string, readonly KubeObject[]][] = [
      ['clusterroles', BOOTSTRAP_CLUSTER_ROLES as unknown as KubeObject[]],
      ['clusterrolebindings', BOOTSTRAP_CLUSTER_ROLE_BINDINGS as unknown as KubeObject[]],
      ['roles', bootstrapRoles(this.options['k8s-group-aliases']) as unknown as KubeObject[]],
      ['rolebindings', bootstrapRoleBindings(this.options['k8s-group-aliases']) as unknown as KubeObject[]],
    ];
    for (const [resource, objects] of sets) {
      const registry = this.registry('rbac.authorization.orch.io', resource);
      for (const wanted of objects) {
        const ns = wanted.metadata.namespace ?? '';
        const name = wanted.metadata.name!;
        for (let attempt = 0; attempt < 5; attempt++) {
          const current = await registry.get(ns, name).catch((err) => {
            if (err instanceof StatusError && err.code === 404) return undefined;
            throw err;
          });
          const next = reconcileDefault(wanted as never, current as never) as KubeObject | undefined;
          if (!next) break;
          try {
            if (current) await registry.update(ns, name, next, systemContext());
            else await registry.create(ns, structuredClone(next), systemContext());
            break;
          } catch (err) {
            if (!(err instanceof StatusError && err.code === 409)) throw err;
          }
        }
      }
    }
  }

  /** Routes every path of the Fastify instance to the handler (call before listen). */
  install(fastify: FastifyInstance): void {
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_REQUEST_BODY_BYTES }, (_req, body, done) => done(null, body));
    fastify.setErrorHandler((err, req, reply) => {
      const se = toStatusError(err);
      // A body refused on its Content-Length is still on its way: close without a reset. Over
      // HTTP/2 the stream is reset instead, the connection stays (and a `connection` header is forbidden).
      if (reply.getHeader('connection') === 'close') {
        if (overHttp2(req.raw)) reply.removeHeader('connection');
        else lingerOnClose(req.raw.socket);
      }
      reply.code(se.code).header('content-type', 'application/json').send(JSON.stringify(se.toStatus()));
    });
    const handler = (req: Parameters<ApiHandler['handle']>[0], reply: Parameters<ApiHandler['handle']>[1]) => this.handler.handle(req, reply);
    for (const method of OTHER_METHODS) if (!fastify.supportedMethods.includes(method)) fastify.addHttpMethod(method);
    for (const url of ['/', '/*']) {
      fastify.route({ method: [...API_METHODS], url, handler, exposeHeadRoute: false });
      fastify.route({ method: OTHER_METHODS, url, handler: methodNotAllowed, exposeHeadRoute: false });
    }
    fastify.server.on('session', (session: Http2Session) => {
      this.http2Sessions.add(session);
      session.once('close', () => this.http2Sessions.delete(session));
    });
    // WebSocket and SPDY upgrades (exec, attach, port-forward) never reach Fastify's routes (HTTP/1.1 connections only).
    fastify.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.handler.handleUpgrade(req, socket, head));
    fastify.server.on('connect', (_req: IncomingMessage, socket: Duplex | Http2ServerResponse) => answerConnect(socket));
    // Sources over --authentication-failure-limit are reset before the TLS handshake.
    this.authenticationFailures?.guard(fastify.server);
  }

  /** Writes the admin kubeconfig for `server` into the data directory. */
  async writeAdminKubeconfig(server: string): Promise<string> {
    const path = join(dataDir(this.options), 'admin.kubeconfig');
    await writeKubeconfig(path, {
      server,
      caPem: this.pki.ca.certPem,
      clientCertPem: this.pki.admin.certPem,
      clientKeyPem: this.pki.admin.keyPem,
      user: 'admin',
      context: 'admin@orch',
    });
    return path;
  }

  /** Writes `<component>.kubeconfig` files into the data directory (see writeComponentKubeconfigs). */
  async writeComponentKubeconfigs(server: string): Promise<void> {
    await writeComponentKubeconfigs(dataDir(this.options), this.pki, server, this.options['node-name'] || hostname());
  }

  /** First step of a graceful shutdown: readyz fails and every watch ends cleanly. */
  endWatches(): void {
    this.health.markShuttingDown();
    this.handler.closeAllWatches();
  }

  /** Graceful shutdown: readyz fails, watches end cleanly, then the pump, cache and store close. */
  async close(): Promise<void> {
    // Out of the API Services' endpoints first, while the store is open.
    await this.apiEndpoints?.stop();
    this.endWatches();
    await this.pump?.stop();
    await this.customResources?.stop();
    this.flowControl?.stop();
    this.aggregator?.stop();
    for (const c of this.caches) c.stop();
    this.watchCache.stop();
    await this.serviceAddressRepair?.stop();
    await Promise.all([this.watchCache.bus?.close(), this.watchCache.history.close()]);
    await this.store.close();
  }
}

/**
 * Writes `<component>.kubeconfig` files into dir, each with its own client certificate from
 * the cluster CA: the component identities of the local and HA profiles (until per-component
 * RBAC identities land). The node agent is `system:node:<nodeName>` in system:nodes. The
 * dashboard, which has no client identity, gets a serving certificate of its own from the
 * cluster CA (`<pki>/dashboard.crt` and `.key`, SANs 127.0.0.1, ::1 and localhost).
 */
export async function writeComponentKubeconfigs(dir: string, pki: Pki, server: string, nodeName: string): Promise<void> {
  const identities: { file: string; cn: string; orgs: string[] }[] = [
    { file: 'controller-manager', cn: 'system:orch-controller-manager', orgs: [] },
    { file: 'scheduler', cn: 'system:orch-scheduler', orgs: [] },
    { file: 'network-proxy', cn: 'system:orch-proxy', orgs: [] },
    { file: 'metrics-server', cn: 'system:orch-metrics-server', orgs: [] },
    { file: 'node-agent', cn: `system:node:${nodeName.toLowerCase()}`, orgs: ['system:nodes'] },
  ];
  for (const id of identities) {
    const cert = await issueClientCert(pki, { cn: id.cn, orgs: id.orgs });
    await writeKubeconfig(join(dir, `${id.file}.kubeconfig`), { server, caPem: pki.ca.certPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, user: id.cn, context: `${id.file}@orch` });
  }
  const dashboard = await issueServingCert(pki, { cn: 'orch-dashboard', hosts: ['127.0.0.1', '::1', 'localhost'] });
  await writeAtomic(join(pki.dir, 'dashboard.key'), dashboard.keyPem, 0o600);
  await writeAtomic(join(pki.dir, 'dashboard.crt'), dashboard.certPem, 0o644);
}

/** The pump's Lease (`kubectl get lease -n orch-system orch-watch-pump` shows the leading pump). */
export const PUMP_LEASE = { namespace: 'orch-system', name: 'orch-watch-pump' };
/** Where that Lease is stored: the key the leases registry gives it (a test checks they agree). */
export const PUMP_LEASE_KEY = `/registry/coordination.orch.io/leases/${PUMP_LEASE.namespace}/${PUMP_LEASE.name}`;

/**
 * The one pump of a cluster, however it is hosted (a gateway replica, or a `gateway watch-pump`
 * process): with a bus between processes the candidates elect the publisher through a Lease in
 * the store itself (not through the API); on the in-process bus it always publishes.
 */
export function createWatchPump(store: Store, bus: WatchBus, history: EventHistory, opts: { identity: string; startPosition: () => number; log: (message: string) => void }): Pump {
  return new Pump(store, bus, history.scope === 'cluster' ? history : undefined, {
    prefix: '/registry/',
    startPosition: opts.startPosition,
    election: bus.distributed ? { lock: storeLeaseLock(store, PUMP_LEASE_KEY), identity: `${opts.identity}_${randomUUID().slice(0, 8)}`, ...PUMP_LEASE } : undefined,
    log: opts.log,
  });
}

/**
 * The watch seams from flags (env as fallback): NATS and Redis when configured, else the
 * embedded in-process bus and memory history of a single gateway. On NATS and Redis the
 * subject and stream key are the cluster's own (from the identity kept in its store), so
 * clusters sharing one NATS or Redis never mix their events.
 */
export async function openWatchBackends(options: GatewayOptions, store: Store, retentionMs: number, logger: Logger): Promise<{ bus: WatchBus; history: EventHistory }> {
  const log = (message: string) => logger.warn(message);
  const natsUrl = options['nats-url'] || process.env.ORCH_NATS_URL || '';
  const redisUrl = options['redis-url'] || process.env.ORCH_REDIS_URL || '';
  const channels = natsUrl || redisUrl ? watchChannels(await clusterIdentity(store)) : undefined;
  if (channels) logger.info(`cluster ${channels.cluster}: watch bus ${natsUrl ? `nats subject ${channels.subject}` : 'in-process'}, history ${redisUrl ? `redis stream ${channels.historyKey}` : 'in memory'}`);
  const bus = natsUrl ? await NatsBus.connect({ url: natsUrl, subject: channels!.subject, name: `orch-gateway-${hostname()}`, log }) : new LocalBus();
  try {
    const history = redisUrl ? await RedisHistory.connect({ url: redisUrl, key: channels!.historyKey, retentionMs, log }) : new MemoryHistory({ retentionMs });
    return { bus, history };
  } catch (err) {
    await bus.close();
    throw err;
  }
}

export async function openStore(options: GatewayOptions, retentionMs: number): Promise<Store> {
  // The store keeps history for the watch retention too (resumes fall back to it): compact
  // often enough that a resourceVersion older than the retention is gone soon after (410).
  const compactionIntervalMs = Math.min(30_000, Math.max(100, Math.floor(retentionMs / 4)));
  switch (options['storage-backend']) {
    case 'sqlite':
      return openSqliteStore(join(dataDir(options), 'orch.db'), { historyRetentionMs: retentionMs, compactionIntervalMs, onWarning: (m) => createLogger('gateway').warn(m) });
    case 'etcd':
      if (options['etcd-servers'].length === 0) throw new Error('--etcd-servers must be set when --storage-backend=etcd');
      return openEtcdStore({ endpoints: options['etcd-servers'], prefix: options['etcd-prefix'], historyRetentionMs: retentionMs, compactionIntervalMs });
    default:
      throw new Error(`unknown --storage-backend ${JSON.stringify(options['storage-backend'])}: must be sqlite or etcd`);
  }
}

export { MAX_REQUEST_BODY_BYTES };
