import type { FlagDefs } from '@orch/server-common';
import { IPVS_SCHEDULERS, PROXY_MODES, type IpvsScheduler, type ProxyMode } from './balancer';

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
