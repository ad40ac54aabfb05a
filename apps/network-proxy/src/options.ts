import { hostname } from 'node:os';
import type { COMPONENT_FLAGS, ComponentContext } from '@orch/component';
import type { FlagDefs, FlagValues } from '@orch/server-common';
import { IPVS_SCHEDULERS, PROXY_MODES, schedulerFor, type IpvsScheduler, type ProxyMode, type SchedulerName } from './balancer';
import { nodePortAddresses } from './node-addresses';

/** network-proxy flags (upstream kube-proxy names); --kubeconfig comes from the component. */
export const PROXY_FLAGS = {
  'healthz-bind-address': {
    type: 'string',
    default: '0.0.0.0:10256',
    description: 'The address:port of the plain-HTTP health server (/healthz, /livez, /readyz, /metrics), as upstream kube-proxy, for load balancer health checks. (--secure-port and --bind-address do not apply to the network-proxy.)',
  },
  'proxy-mode': { type: 'string', default: 'iptables', description: `Which proxy mode to use: ${PROXY_MODES.join(' (random backend) or ')} (--ipvs-scheduler). Both forward in userspace.` },
  'ipvs-scheduler': { type: 'string', default: 'rr', description: `The ipvs scheduler type when proxy mode is ipvs: ${IPVS_SCHEDULERS.join(', ')}.` },
  'hostname-override': { type: 'string', default: '', description: "This node's name, matched against EndpointSlice nodeName for Local traffic policies (default: the host name)." },
  'nodeport-addresses': { type: 'stringSlice', default: [], description: 'IPv4 CIDRs; node ports are served only on local addresses inside them (default: all addresses).' },
  'metrics-bind-address': { type: 'string', default: '127.0.0.1:10249', description: 'The address:port of the plain-HTTP metrics server (/metrics, also health); empty disables it.' },
  'udp-timeout': { type: 'duration', default: 250, description: 'How long an idle UDP flow is kept (e.g. 250ms, 2s). Must be greater than 0.' },
} satisfies FlagDefs;

/** Checks the mode and scheduler flags; throws a start-up error for unknown values. */
export function proxyModeFrom(mode: string, scheduler: string): { mode: ProxyMode; scheduler: IpvsScheduler } {
  const m = (mode || 'iptables') as ProxyMode;
  if (!PROXY_MODES.includes(m)) throw new Error(`--proxy-mode=${mode}: must be one of ${PROXY_MODES.join(', ')}`);
  const s = (scheduler || 'rr') as IpvsScheduler;
  if (!IPVS_SCHEDULERS.includes(s)) throw new Error(`--ipvs-scheduler=${scheduler}: must be one of ${IPVS_SCHEDULERS.join(', ')}`);
  return { mode: m, scheduler: s };
}

/** Splits `host:port` (`[v6]:port` too); throws a start-up error when malformed. */
export function hostPort(flag: string, value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`--${flag}=${value}: want host:port (e.g. 127.0.0.1:10249)`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/**
 * The network-proxy's configuration, the one options provider of its Nest application: the
 * flags as given, plus what is derived from them once (checked, parsed, defaulted). Building it
 * throws the start-up error of a bad flag.
 */
export class ProxyOptions {
  readonly mode: ProxyMode;
  readonly scheduler: SchedulerName;
  /** This node's name (`--hostname-override` or the host name), for Local traffic policies. */
  readonly nodeName: string;
  /** The addresses node ports are served on. */
  readonly nodePortAddresses: readonly string[];
  /** How long an idle UDP flow is kept (`--udp-timeout`). */
  readonly udpIdleMs: number;
  /** Where the metrics server listens; undefined when `--metrics-bind-address` is empty. */
  readonly metricsAddress?: { host: string; port: number };

  constructor(readonly flags: ProxyFlags) {
    const { mode, scheduler } = proxyModeFrom(flags['proxy-mode'], flags['ipvs-scheduler']);
    if (flags['udp-timeout'] <= 0) throw new Error('--udp-timeout must be greater than 0');
    this.mode = mode;
    this.scheduler = schedulerFor(mode, scheduler);
    this.nodeName = (flags['hostname-override'] || hostname()).trim().toLowerCase();
    this.nodePortAddresses = nodePortAddresses(flags['nodeport-addresses']);
    this.udpIdleMs = flags['udp-timeout'];
    this.metricsAddress = flags['metrics-bind-address'] ? hostPort('metrics-bind-address', flags['metrics-bind-address']) : undefined;
  }
}

export type ProxyFlags = FlagValues<typeof PROXY_FLAGS & typeof COMPONENT_FLAGS>;
/** What the component runtime gives the network-proxy's providers (COMPONENT_CONTEXT). */
export type ProxyContext = ComponentContext<typeof PROXY_FLAGS>;
