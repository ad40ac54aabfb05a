import { componentMain } from '@orch/component';
import { PROXY_FLAGS, ProxyOptions, hostPort } from './options';
import { ProxyModule } from './proxy.module';

/**
 * orch network-proxy: forwards TCP and UDP from service cluster IPs and node ports to ready
 * endpoints, in userspace. Health on --healthz-bind-address (default 0.0.0.0:10256, plain HTTP
 * as upstream) and health plus metrics on --metrics-bind-address (default 127.0.0.1:10249, HTTP).
 */
componentMain({
  name: 'network-proxy',
  description: 'The orch network-proxy watches Services and EndpointSlices through the gateway and forwards TCP and UDP traffic for service cluster IPs and node ports to ready endpoints.',
  defaultPort: 10256,
  flags: PROXY_FLAGS,
  leaderElection: false,
  healthServer(f) {
    if (f['secure-port']) throw new Error('--secure-port does not apply to the network-proxy: its health server is plain HTTP on --healthz-bind-address');
    return { ...hostPort('healthz-bind-address', f['healthz-bind-address']), tls: false };
  },
  module: (ctx) => ProxyModule.forRoot(new ProxyOptions(ctx.flags)),
});
