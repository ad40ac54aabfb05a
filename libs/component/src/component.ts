import { hostname } from 'node:os';
import { FeatureGates } from '@orch/api';
import { loadKubeconfig, selfSignedServingCert } from '@orch/auth';
import { LeaderElector, RestClient, inClusterConfig, type ClientConfig } from '@orch/client';
import {
  HealthChecks,
  createLogger,
  createMetricsRegistry,
  parseFlagsOrExit,
  startComponentServer,
  type FlagDefs,
  type FlagValues,
  type Logger,
} from '@orch/server-common';
import type { Registry } from 'prom-client';

/** Flags every orch component takes (upstream names). */
export const COMPONENT_FLAGS = {
  kubeconfig: { type: 'string', default: '', description: 'Path to a kubeconfig with the gateway address and this component\'s credentials (default: in-cluster config).' },
  'secure-port': { type: 'int', default: 0, description: 'HTTPS port for health and metrics (0: the component default).' },
  'bind-address': { type: 'string', default: '127.0.0.1', description: 'Address for the health and metrics port.' },
  'leader-elect': { type: 'bool', default: true, description: 'Start a leader election client and gain leadership before running the main loop (for replicated components).' },
  'leader-elect-lease-duration': { type: 'duration', default: 15_000, description: 'How long non-leaders wait after a renewal before trying to take leadership.' },
  'leader-elect-renew-deadline': { type: 'duration', default: 10_000, description: 'How long the leader keeps trying to renew before it gives up leadership.' },
  'leader-elect-retry-period': { type: 'duration', default: 2_000, description: 'How long clients wait between attempts to acquire and renew leadership.' },
  'leader-elect-resource-namespace': { type: 'string', default: 'orch-system', description: 'Namespace of the leader election Lease.' },
  'leader-elect-resource-name': { type: 'string', default: '', description: 'Name of the leader election Lease (default: the component name).' },
  'feature-gates': { type: 'string', default: '', description: 'A set of key=value pairs that describe feature gates for alpha/experimental features.' },
} satisfies FlagDefs;

export interface ComponentContext<D extends FlagDefs> {
  name: string;
  flags: FlagValues<D & typeof COMPONENT_FLAGS>;
  client: RestClient;
  clientConfig: ClientConfig;
  logger: Logger;
  health: HealthChecks;
  metrics: Registry;
  /** Unique identity of this process (leader election holder, event reportingInstance). */
  identity: string;
  features: FeatureGates;
}

export interface ComponentSpec<D extends FlagDefs> {
  /** e.g. `controller-manager`. */
  name: string;
  description: string;
  /** Health/metrics port when --secure-port is 0 (SPEC ports: 10257, 10259, 10256...). */
  defaultPort: number;
  flags: D;
  /** Uses leader election (controller-manager, scheduler); node-agent and proxy do not. */
  leaderElection: boolean;
  /**
   * Where the health and metrics server listens, for a component that does not serve them
   * over HTTPS on --bind-address:--secure-port (network-proxy: plain HTTP on
   * --healthz-bind-address, as upstream kube-proxy, for load balancers' probes).
   */
  healthServer?(flags: FlagValues<D & typeof COMPONENT_FLAGS>): { host: string; port: number; tls: false };
  /** Prepares the component (informers, handlers) before leadership; may register health checks. */
  setup?(ctx: ComponentContext<D>): Promise<void>;
  /** The main loop; runs while leading (or always without leader election); ends when signal aborts. */
  run(ctx: ComponentContext<D>, signal: AbortSignal): Promise<void>;
}

/** Loads the client configuration: --kubeconfig, else in-cluster service-account config. */
export async function clientConfigFrom(kubeconfig: string): Promise<ClientConfig> {
  if (kubeconfig) return (await loadKubeconfig(kubeconfig)) as ClientConfig;
  return inClusterConfig();
}

/** How long a stopping component waits for its main loop to finish before exiting anyway. */
const MAIN_LOOP_STOP_MS = 10_000;

/** The component's health and metrics server: HTTPS with a self-signed certificate unless the spec says otherwise. */
async function startHealthServer<D extends FlagDefs>(spec: ComponentSpec<D>, flags: FlagValues<D & typeof COMPONENT_FLAGS>, health: HealthChecks, metrics: Registry) {
  const custom = spec.healthServer?.(flags);
  if (custom) return startComponentServer({ port: custom.port, host: custom.host, healthChecks: health, registry: metrics });
  const port = flags['secure-port'] || spec.defaultPort;
  const tls = await selfSignedServingCert([flags['bind-address'], 'localhost'], `${spec.name}@${Math.floor(Date.now() / 1000)}`);
  return startComponentServer({ port, host: flags['bind-address'], healthChecks: health, registry: metrics, tls: { cert: tls.certPem, key: tls.keyPem } });
}

/**
 * Runs an orch component process: flags, client, HTTPS health and metrics port (self-signed
 * certificate), optional leader election on a Lease, and clean shutdown on SIGINT/SIGTERM:
 * the run signal aborts, the main loop gets MAIN_LOOP_STOP_MS to finish (a leader releases
 * its lease), the ports close, then the process exits 0 (1 when the main loop failed before the
 * stop signal; one that fails because the signal stopped its start-up is a clean stop), so a
 * handle left open somewhere never keeps a stopped component alive.
 */
export async function runComponent<D extends FlagDefs>(spec: ComponentSpec<D>, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const defs = { ...COMPONENT_FLAGS, ...spec.flags };
  const { values } = parseFlagsOrExit({ name: spec.name, description: spec.description }, defs, argv);
  const flags = values as unknown as FlagValues<D & typeof COMPONENT_FLAGS>;
  const logger = createLogger(spec.name);
  // Unknown gates and changing a locked (GA) gate are start-up errors (SPEC feature gates).
  const features = new FeatureGates(flags['feature-gates']);
  for (const w of features.warnings) logger.warn(w);
  const clientConfig = await clientConfigFrom(flags.kubeconfig);
  const client = new RestClient(clientConfig, { component: spec.name });
  const health = new HealthChecks({});
  const metrics = createMetricsRegistry();
  const identity = `${hostname()}_${process.pid}`;
  const ctx: ComponentContext<D> = { name: spec.name, flags, client, clientConfig, logger, health, metrics, identity, features };

  const server = await startHealthServer(spec, flags, health, metrics);
  logger.info('serving health and metrics', { port: server.port });

  const stop = new AbortController();
  /** The main loop while it runs (settles when it returned or failed). */
  let mainLoop: Promise<unknown> = Promise.resolve();
  let failed = false;
  const onSignal = (sig: string) => {
    if (stop.signal.aborted) return;
    logger.info('shutting down', { signal: sig });
    health.markShuttingDown();
    stop.abort();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  try {
    await spec.setup?.(ctx);
    if (spec.leaderElection && flags['leader-elect']) {
      const elector = new LeaderElector({
        client,
        namespace: flags['leader-elect-resource-namespace'],
        name: flags['leader-elect-resource-name'] || spec.name,
        identity,
        leaseDurationMs: flags['leader-elect-lease-duration'],
        renewDeadlineMs: flags['leader-elect-renew-deadline'],
        retryPeriodMs: flags['leader-elect-retry-period'],
        releaseOnCancel: true,
        onStartedLeading: (signal: AbortSignal) => {
          logger.info('started leading', { identity });
          mainLoop = spec.run(ctx, signal).catch((err) => {
            // Stopped while it was still starting (a token or a cache not there yet): a clean stop.
            if (signal.aborted) return logger.info('stopped while starting', { err: String(err) });
            logger.error('main loop failed', { err: String(err) });
            failed = true;
            onSignal('error');
          });
        },
        onStoppedLeading: () => {
          if (stop.signal.aborted) return; // a normal stop releases the lease; nothing was lost
          // Exit 1 as upstream's components do ("leaderelection lost"): a supervisor that restarts
          // failed processes (systemd Restart=on-failure, a pod's restartPolicy) starts a fresh one.
          logger.warn('leadership lost; exiting so a fresh process can campaign again');
          failed = true;
          onSignal('leadership-lost');
        },
        onNewLeader: (leader: string) => logger.info('new leader', { leader }),
      });
      await elector.run(stop.signal);
    } else {
      await spec.run(ctx, stop.signal).catch((err: unknown) => {
        if (!stop.signal.aborted) throw err;
        logger.info('stopped while starting', { err: String(err) });
      });
    }
    await new Promise<void>((resolve) => (stop.signal.aborted ? resolve() : stop.signal.addEventListener('abort', () => resolve())));
    const finished = await Promise.race([mainLoop.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), MAIN_LOOP_STOP_MS).unref())]);
    if (!finished) logger.warn('the main loop did not finish in time after the stop signal; exiting anyway', { ms: MAIN_LOOP_STOP_MS });
  } finally {
    await server.close();
    client.close();
  }
  process.exit(failed ? 1 : 0);
}
