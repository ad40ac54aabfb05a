import type { ComponentContext } from '@orch/component';
import type { FlagDefs } from '@orch/server-common';

/** The metrics server's own flags (upstream names); the component runtime adds the common ones. */
export const METRICS_SERVER_FLAGS = {
  'cert-dir': { type: 'string', default: '', description: 'Directory for the serving certificate and its CA (tls.crt, tls.key, ca.crt), created when missing. Ignored with --tls-cert-file.' },
  'tls-cert-file': { type: 'string', default: '', description: 'Serving certificate (PEM).' },
  'tls-private-key-file': { type: 'string', default: '', description: 'Key of --tls-cert-file (PEM).' },
  'healthz-port': { type: 'int', default: 0, description: 'Plain HTTP port for /healthz, /livez, /readyz and /metrics (0: any free port).' },
  'metric-resolution': { type: 'duration', default: 15_000, description: 'How often the node agents are scraped.' },
  register: { type: 'bool', default: false, description: 'Register this server with the gateway: the orch-system/metrics-server Service and Endpoints (--advertise-address:--secure-port) and the APIService v1beta1.metrics.orch.io with its CA bundle.' },
  'registration-kubeconfig': { type: 'string', default: '', description: 'Credentials for --register (an administrator\'s: the server\'s own identity may not create APIServices); default --kubeconfig.' },
  'advertise-address': { type: 'string', default: '', description: 'Address the gateway reaches this server on (default: --bind-address).' },
} satisfies FlagDefs;

/** What the component runtime hands the metrics server: flags, client, logger, health checks, identity. */
export type MetricsServerComponent = ComponentContext<typeof METRICS_SERVER_FLAGS>;

export const NAMESPACE = 'orch-system';
export const NAME = 'metrics-server';
/** The metrics API's port when --secure-port is 0 (upstream metrics-server's). */
export const DEFAULT_API_PORT = 4443;

/** The metrics server's configuration, built once from its flags. */
export interface MetricsServerOptions {
  /** Where the metrics API listens (HTTPS). */
  bindAddress: string;
  port: number;
  /** The address registered with the gateway (and put in the serving certificate). */
  advertiseAddress: string;
  /** The serving certificate: given files, else one kept in `certDir`. */
  tls: { certFile: string; keyFile: string; certDir: string };
  /** How often the node agents are scraped. */
  resolutionMs: number;
  /** `--register`, with the kubeconfig to register with ('' for the server's own). */
  registration?: { kubeconfig: string };
}

/** Nest injection token of the {@link MetricsServerOptions}. */
export const METRICS_SERVER_OPTIONS = Symbol('MetricsServerOptions');

export function metricsServerOptions(component: Pick<MetricsServerComponent, 'flags'>): MetricsServerOptions {
  const f = component.flags;
  return {
    bindAddress: f['bind-address'],
    port: f['secure-port'] || DEFAULT_API_PORT,
    advertiseAddress: f['advertise-address'] || f['bind-address'],
    tls: { certFile: f['tls-cert-file'], keyFile: f['tls-private-key-file'], certDir: f['cert-dir'] },
    resolutionMs: f['metric-resolution'],
    registration: f.register ? { kubeconfig: f['registration-kubeconfig'] } : undefined,
  };
}
