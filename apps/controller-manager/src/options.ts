import { readFileSync } from 'node:fs';
import type { ComponentContext } from '@orch/component';
import type { FlagDefs } from '@orch/server-common';
import { enabledControllers, type ControllerDescriptor, type ControllerOptions } from './framework/controller';
import { CONTROLLERS } from './controllers';

/** The controller-manager's own flags (upstream names); the component runtime adds the common ones. */
export const CONTROLLER_MANAGER_FLAGS = {
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

/** What the component runtime hands the controller-manager: flags, client, logger, metrics, identity. */
export type ControllerManagerComponent = ComponentContext<typeof CONTROLLER_MANAGER_FLAGS>;

/** The controller-manager's configuration, built once from its flags (the files they name read at start). */
export interface ControllerManagerOptions {
  /** The controllers `--controllers` enables, in start order. */
  controllers: ControllerDescriptor[];
  /** `--use-service-account-credentials`: each controller with an account runs as that account. */
  useServiceAccountCredentials: boolean;
  /** What every controller is given as `ControllerContext.options`. */
  controller: ControllerOptions;
}

/** Nest injection token of the {@link ControllerManagerOptions}. */
export const CONTROLLER_MANAGER_OPTIONS = Symbol('ControllerManagerOptions');

function optionalFile(path: string): string | undefined {
  return path ? readFileSync(path, 'utf8') : undefined;
}

/**
 * Builds the options from the flags. Throws `ControllersFlagError` for an unknown name in
 * `--controllers` and the file system's error for a file that cannot be read.
 */
export function controllerManagerOptions(component: Pick<ControllerManagerComponent, 'flags' | 'clientConfig'>): ControllerManagerOptions {
  const f = component.flags;
  const signingCert = optionalFile(f['cluster-signing-cert-file']);
  const signingKey = optionalFile(f['cluster-signing-key-file']);
  return {
    controllers: enabledControllers(f.controllers, CONTROLLERS),
    useServiceAccountCredentials: f['use-service-account-credentials'],
    controller: {
      workers: f['concurrent-syncs'],
      rootCaPem: optionalFile(f['root-ca-file']) ?? component.clientConfig.caPem ?? '',
      serviceAccountKeyPem: optionalFile(f['service-account-private-key-file']),
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
}
