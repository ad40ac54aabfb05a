import 'reflect-metadata';
import { setMaxListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import { Catalog } from '@orch/api';
import { EventRecorder, SharedInformerFactory, type RestClient } from '@orch/client';
import { runComponent, type ComponentContext } from '@orch/component';
import type { FlagDefs } from '@orch/server-common';
import { CONTROLLER_NAMESPACE } from '@orch/auth';
import { enabledControllers, type Controller, type ControllerContext, type ControllerDescriptor } from './framework/controller';
import { ServiceAccountTokenSource, serviceAccountClient } from './controller-credentials';
import { CONTROLLERS } from './controllers';
import { ControllerManagerModule, CONTROLLER_CONTEXT } from './controller-manager.module';
import { DiscoveryRefresher } from './discovery';

const FLAGS = {
  controllers: {
    type: 'stringSlice',
    default: ['*'],
    description: `A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables it. All: ${CONTROLLERS.map((c) => c.name).join(', ')}. Off by default: ${CONTROLLERS.filter((c) => c.disabledByDefault).map((c) => c.name).join(', ')}.`,
  },
  'use-service-account-credentials': {
    type: 'bool',
    default: true,
    description:
      'Run each controller with its own service account orch-system/<controller> (a token from the TokenRequest API, renewed before it expires) and least-privilege role system:controller:<controller>, instead of the controller-manager\'s own credential, which then needs only its informers\' reads, leader election and the token controller\'s writes. On by default, as kubeadm runs it: the bootstrap policy gives the controller-manager\'s own identity no workload writes.',
  },
  'concurrent-syncs': { type: 'int', default: 5, description: 'Workers per controller.' },
  'root-ca-file': { type: 'string', default: '', description: 'Root CA published to every namespace as orch-root-ca.crt and put in service-account token secrets (default: the kubeconfig CA).' },
  'service-account-private-key-file': { type: 'string', default: '', description: 'PEM private key used to sign service account tokens.' },
  'cluster-signing-cert-file': { type: 'string', default: '', description: 'PEM CA certificate used to issue cluster-scoped certificates (node client certificates).' },
  'cluster-signing-key-file': { type: 'string', default: '', description: 'PEM CA private key used to issue cluster-scoped certificates.' },
  'node-monitor-grace-period': { type: 'duration', default: 40_000, description: 'Time a node may go without renewing its lease before it is marked NotReady.' },
  'node-monitor-period': { type: 'duration', default: 5_000, description: 'The period for checking the health of nodes (lease renewals, Ready heartbeats).' },
  'node-startup-grace-period': { type: 'duration', default: 60_000, description: 'Time a starting node may go without posting Ready before it is marked unhealthy.' },
  'terminated-pod-gc-threshold': { type: 'int', default: 12500, description: 'Number of terminated pods that can exist before the pod garbage collector deletes them.' },
  'horizontal-pod-autoscaler-sync-period': { type: 'duration', default: 15_000, description: 'The period for syncing the number of pods in horizontal pod autoscalers.' },
  'horizontal-pod-autoscaler-tolerance': { type: 'float', default: 0.1, description: 'The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.' },
  'horizontal-pod-autoscaler-downscale-stabilization': { type: 'duration', default: 300_000, description: 'The period for which the autoscaler looks backwards and does not scale down below any recommendation it made during that period.' },
  'horizontal-pod-autoscaler-cpu-initialization-period': { type: 'duration', default: 300_000, description: 'The period after pod start when CPU samples might be skipped.' },
  'horizontal-pod-autoscaler-initial-readiness-delay': { type: 'duration', default: 30_000, description: 'The period after pod start during which readiness changes are treated as initial readiness.' },
  'k8s-compatibility': {
    type: 'bool',
    default: true,
    description: 'Also write the upstream kubernetes.io labels and annotations stock tools read (deployment.kubernetes.io/revision, kubernetes.io/service-name, batch.kubernetes.io/job-completion-index...) beside the orch.io forms, and publish the root CA as kube-root-ca.crt too (the controller-manager side of the gateway\'s --k8s-group-aliases).',
  },
} satisfies FlagDefs;

async function optionalFile(path: string): Promise<string | undefined> {
  return path ? readFile(path, 'utf8') : undefined;
}

/** orch controller-manager: runs the core control loops against the gateway. */
void runComponent({
  name: 'controller-manager',
  description: 'The orch controller-manager embeds the core control loops: it watches the shared state through the gateway and makes changes to move the current state towards the desired state.',
  defaultPort: 10257,
  flags: FLAGS,
  leaderElection: true,
  async run(ctx: ComponentContext<typeof FLAGS>, signal: AbortSignal) {
    // Every controller's workers listen on the one stop signal.
    setMaxListeners(0, signal);
    const f = ctx.flags;
    const enabled = enabledControllers(f.controllers, CONTROLLERS);
    const signingCert = await optionalFile(f['cluster-signing-cert-file']);
    const signingKey = await optionalFile(f['cluster-signing-key-file']);
    const catalog = new Catalog();
    const informers = new SharedInformerFactory(ctx.client);
    const discovery = new DiscoveryRefresher(ctx.client, catalog, ctx.logger);
    // Custom resources served now are known before the controllers start.
    await discovery.refresh();
    discovery.start(informers, signal);
    const controllerContext: ControllerContext = {
      client: ctx.client,
      informers,
      catalog,
      discovery,
      recorder: (reportingController) => new EventRecorder({ client: ctx.client, reportingController, reportingInstance: ctx.identity }),
      logger: ctx.logger,
      metrics: ctx.metrics,
      options: {
        workers: f['concurrent-syncs'],
        rootCaPem: (await optionalFile(f['root-ca-file'])) ?? ctx.clientConfig.caPem ?? '',
        serviceAccountKeyPem: await optionalFile(f['service-account-private-key-file']),
        clusterSigning: signingCert && signingKey ? { certPem: signingCert, keyPem: signingKey } : undefined,
        nodeMonitorGracePeriodMs: f['node-monitor-grace-period'],
        nodeMonitorPeriodMs: f['node-monitor-period'],
        nodeStartupGracePeriodMs: f['node-startup-grace-period'],
        terminatedPodGcThreshold: f['terminated-pod-gc-threshold'],
        k8sCompatibility: f['k8s-compatibility'],
        autoscaler: {
          syncPeriodMs: f['horizontal-pod-autoscaler-sync-period'],
          tolerance: f['horizontal-pod-autoscaler-tolerance'],
          downscaleStabilizationMs: f['horizontal-pod-autoscaler-downscale-stabilization'],
          cpuInitializationPeriodMs: f['horizontal-pod-autoscaler-cpu-initialization-period'],
          delayOfInitialReadinessStatusMs: f['horizontal-pod-autoscaler-initial-readiness-delay'],
        },
      },
    };
    const app = await NestFactory.createApplicationContext(ControllerManagerModule.forRoot(controllerContext, enabled), { logger: ['error', 'warn'] });
    const context = app.get<ControllerContext>(CONTROLLER_CONTEXT);
    // --use-service-account-credentials: each controller gets a context whose client (and event
    // recorder) authenticate as its own service account; informers stay shared, read as the
    // controller-manager.
    const identities = new Map<string, RestClient>();
    const contextFor = async (d: ControllerDescriptor): Promise<ControllerContext> => {
      if (!f['use-service-account-credentials'] || !d.serviceAccount) return context;
      let client = identities.get(d.serviceAccount);
      if (!client) {
        const source = new ServiceAccountTokenSource(ctx.client, CONTROLLER_NAMESPACE, d.serviceAccount, ctx.logger);
        client = serviceAccountClient(ctx.clientConfig, source);
        identities.set(d.serviceAccount, client);
        await source.start(signal);
      }
      const own = client;
      return { ...context, client: own, recorder: (reportingController) => new EventRecorder({ client: own, reportingController, reportingInstance: ctx.identity }) };
    };
    const controllers: Controller[] = [];
    for (const d of enabled) controllers.push(d.create(await contextFor(d)));
    ctx.logger.info('starting controllers', { controllers: controllers.map((c) => c.name) });
    const running = controllers.map((c) => c.run(signal));
    context.informers.start();
    await Promise.all(running);
    context.informers.shutdown();
    for (const client of identities.values()) client.close();
    await app.close();
  },
}).catch((err) => {
  console.error(`controller-manager: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
