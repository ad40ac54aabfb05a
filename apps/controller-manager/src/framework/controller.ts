import type { Catalog } from '@orch/api';
import type { EventRecorder, RestClient, SharedInformerFactory } from '@orch/client';
import type { Logger } from '@orch/server-common';
import type { Registry } from 'prom-client';

/**
 * What every controller gets: the API client, the shared informer factory (one informer per
 * resource for the whole process), an event recorder and options. Controllers talk to the
 * gateway only (ARCHITECTURE §1).
 */
export interface ControllerContext {
  client: RestClient;
  informers: SharedInformerFactory;
  catalog: Catalog;
  /**
   * The server's resources beyond the built-in ones (custom resources, aggregated APIs), kept
   * in `catalog`: `refresh` reads discovery now; listeners hear of every change (a CRD
   * established or removed). Absent in tests that need only the built-in API.
   */
  discovery?: ControllerDiscovery;
  /** An event recorder reporting as `reportingController`. */
  recorder(reportingController: string): EventRecorder;
  logger: Logger;
  options: ControllerOptions;
  /** Where controllers export their work queues' metrics (absent in tests that do not read them). */
  metrics?: Registry;
}

/** Discovery of the served resources, as controllers that handle every kind need it (garbage collector, namespaces). */
export interface ControllerDiscovery {
  refresh(): Promise<boolean>;
  onChange(listener: () => void): () => void;
}

export interface ControllerOptions {
  /** Worker goroutines per controller (upstream --concurrent-*-syncs; one knob here). */
  workers: number;
  /** PEM of the cluster CA published as orch-root-ca.crt and put in token secrets. */
  rootCaPem: string;
  /** PEM private key signing service-account tokens (--service-account-private-key-file). */
  serviceAccountKeyPem?: string;
  /** PEM cert and key of the CA that signs node client certificates (--cluster-signing-*-file). */
  clusterSigning?: { certPem: string; keyPem: string };
  /** Node lifecycle: grace before a node whose lease stopped is NotReady (default 40 s). */
  nodeMonitorGracePeriodMs: number;
  /** Node lifecycle: how often node health is checked (default 5 s). */
  nodeMonitorPeriodMs?: number;
  /** Node lifecycle: grace for a node whose agent never posted Ready (default 60 s). */
  nodeStartupGracePeriodMs?: number;
  /** Terminated pods kept before pod GC deletes them (default 12500). */
  terminatedPodGcThreshold: number;
  /**
   * Compatibility option (--k8s-compatibility): also write the upstream `kubernetes.io` twins
   * of well-known labels and annotations, and publish the root CA as `kube-root-ca.crt`.
   */
  k8sCompatibility: boolean;
  /** HorizontalPodAutoscaler controller (upstream --horizontal-pod-autoscaler-* flags). */
  autoscaler?: {
    syncPeriodMs: number;
    tolerance: number;
    downscaleStabilizationMs: number;
    cpuInitializationPeriodMs: number;
    delayOfInitialReadinessStatusMs: number;
  };
}

/**
 * One control loop. `run` starts its informer handlers and workers and returns when signal
 * aborts (after its workers stopped). Handlers only enqueue keys; `sync(key)` is
 * level-triggered and idempotent (STYLE 7-8).
 */
export interface Controller {
  readonly name: string;
  run(signal: AbortSignal): Promise<void>;
}

export interface ControllerDescriptor {
  name: string;
  /** Off unless named in --controllers (upstream: bootstrapsigner, tokencleaner). */
  disabledByDefault?: boolean;
  /**
   * The service account `orch-system/<serviceAccount>` the controller runs as with
   * `--use-service-account-credentials` (upstream's account names; the bootstrap policy binds
   * `system:controller:<serviceAccount>` to it). Absent: it runs as the controller-manager
   * itself (upstream: the service-account token controller).
   */
  serviceAccount?: string;
  create(ctx: ControllerContext): Controller;
}

/** A controller enabled by --controllers that cannot work without a flag: it logs why and does nothing. */
export function disabledController(ctx: ControllerContext, name: string, why: string): Controller {
  return { name, run: async () => ctx.logger.warn(`${name} controller disabled: ${why}`) };
}

export class ControllersFlagError extends Error {}

/**
 * `--controllers`: `*` enables everything on by default, `foo` enables foo, `-foo` disables
 * foo (upstream semantics). Unknown names are errors.
 */
export function enabledControllers(spec: string[], known: ControllerDescriptor[]): ControllerDescriptor[] {
  const names = new Set(known.map((c) => c.name));
  const items = spec.length === 0 ? ['*'] : spec;
  for (const item of items) {
    const name = item.startsWith('-') ? item.slice(1) : item;
    if (name !== '*' && !names.has(name)) throw new ControllersFlagError(`"${name}" is not in the list of known controllers`);
  }
  const star = items.includes('*');
  return known.filter((c) => {
    if (items.includes(`-${c.name}`)) return false;
    if (items.includes(c.name)) return true;
    return star && !c.disabledByDefault;
  });
}
