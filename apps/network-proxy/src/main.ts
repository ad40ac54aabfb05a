import { hostname } from 'node:os';
import { FeatureGates } from '@orch/api';
import { SharedInformerFactory } from '@orch/client';
import { runComponent, type ComponentContext, type ComponentSpec } from '@orch/component';
import { startComponentServer, type ComponentServer } from '@orch/server-common';
import { schedulerFor } from './balancer';
import { ProxyController } from './controller';
import { ProxyMetrics } from './metrics';
import { nodePortAddresses } from './node-addresses';
import { PROXY_FLAGS, hostPort, proxyModeFrom } from './options';
import { Proxier } from './proxier';

type Ctx = ComponentContext<typeof PROXY_FLAGS>;

/**
 * orch network-proxy: forwards TCP and UDP from service cluster IPs and node ports to ready
 * endpoints, in userspace. Health on --healthz-bind-address (default 0.0.0.0:10256, plain HTTP
 * as upstream) and health plus metrics on --metrics-bind-address (default 127.0.0.1:10249, HTTP).
 */
function networkProxy(): ComponentSpec<typeof PROXY_FLAGS> {
  let controller: ProxyController | undefined;
  let informers: SharedInformerFactory | undefined;
  let metricsServer: ComponentServer | undefined;
  return {
    name: 'network-proxy',
    description: 'The orch network-proxy watches Services and EndpointSlices through the gateway and forwards TCP and UDP traffic for service cluster IPs and node ports to ready endpoints.',
    defaultPort: 10256,
    flags: PROXY_FLAGS,
    leaderElection: false,
    healthServer(f) {
      if (f['secure-port']) throw new Error('--secure-port does not apply to the network-proxy: its health server is plain HTTP on --healthz-bind-address');
      return { ...hostPort('healthz-bind-address', f['healthz-bind-address']), tls: false };
    },
    async setup(ctx: Ctx) {
      const f = ctx.flags;
      new FeatureGates(f['feature-gates']); // unknown or locked gates are start-up errors
      const { mode, scheduler } = proxyModeFrom(f['proxy-mode'], f['ipvs-scheduler']);
      if (f['udp-timeout'] <= 0) throw new Error('--udp-timeout must be greater than 0');
      const nodeName = (f['hostname-override'] || hostname()).trim().toLowerCase();
      const metrics = new ProxyMetrics(ctx.metrics);
      const proxier = new Proxier({ scheduler: schedulerFor(mode, scheduler), logger: ctx.logger, metrics, udpIdleMs: f['udp-timeout'] });
      informers = new SharedInformerFactory(ctx.client);
      const ctl = new ProxyController(informers, proxier, { nodeName, nodePortAddresses: nodePortAddresses(f['nodeport-addresses']) }, ctx.logger, metrics);
      controller = ctl;
      ctx.health.add(
        'proxier-synced',
        () => {
          if (!ctl.synced()) throw new Error('services and endpoint slices not synced yet');
        },
        { endpoints: ['healthz', 'readyz'] },
      );
      if (f['metrics-bind-address']) {
        const { host, port } = hostPort('metrics-bind-address', f['metrics-bind-address']);
        metricsServer = await startComponentServer({ port, host, healthChecks: ctx.health, registry: ctx.metrics });
      }
      informers.start();
      ctx.logger.info('network proxy configured', { mode, scheduler: schedulerFor(mode, scheduler), nodeName, metrics: f['metrics-bind-address'] || 'off' });
    },
    async run(_ctx: Ctx, signal: AbortSignal) {
      try {
        await controller?.run(signal);
      } finally {
        await informers?.shutdown();
        await metricsServer?.close();
      }
    },
  };
}

void runComponent(networkProxy()).catch((err) => {
  console.error(`network-proxy: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
