import { applyDefaults, type DefaultsOptions } from './defaults';

type Gvk = readonly [group: string, version: string, kind: string];
type Json = Record<string, unknown>;

/** Value at a path like `spec.template.spec.containers[0].image`. */
function at(obj: unknown, path: string): unknown {
  return path
    .split(/\.|(?=\[)/)
    .filter(Boolean)
    .reduce<unknown>((cur, seg) => {
      if (cur === undefined || cur === null) return undefined;
      const idx = /^\[(\d+)\]$/.exec(seg);
      return idx ? (cur as unknown[])[Number(idx[1])] : (cur as Json)[seg];
    }, obj);
}

const podSpec = (extra: Json = {}): Json => ({ containers: [{ name: 'c', image: 'nginx:1.27' }], ...extra });
const template = (extra: Json = {}): Json => ({ metadata: { labels: { app: 'a' } }, spec: podSpec(extra) });

interface Row {
  name: string;
  gvk: Gvk;
  obj: Json;
  want: Record<string, unknown>;
  options?: DefaultsOptions;
}

describe('applyDefaults', () => {
  it.each<Row>([
    {
      // A recursive schema (JSONSchemaProps) on the way, and a defaulter deep below it.
      name: 'CustomResourceDefinition: nested schema properties, webhook conversion service port',
      gvk: ['apiextensions.orch.io', 'v1', 'CustomResourceDefinition'],
      obj: {
        spec: {
          group: 'x.io',
          names: { plural: 'widgets', kind: 'Widget' },
          scope: 'Namespaced',
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } } } }],
          conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'n', name: 's' } } } },
        },
      },
      want: {
        'spec.conversion.webhook.clientConfig.service.port': 443,
        'spec.names.singular': 'widget',
        'spec.names.listKind': 'WidgetList',
        'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.type': 'string',
        'status.storedVersions': ['v1'],
      },
    },
    {
      name: 'Deployment (SPEC Versioning)',
      gvk: ['apps', 'v1', 'Deployment'],
      obj: { spec: { selector: { matchLabels: { app: 'a' } }, template: template() } },
      want: {
        'spec.replicas': 1,
        'spec.progressDeadlineSeconds': 600,
        'spec.revisionHistoryLimit': 10,
        'spec.strategy.type': 'RollingUpdate',
        'spec.strategy.rollingUpdate.maxSurge': '25%',
        'spec.strategy.rollingUpdate.maxUnavailable': '25%',
        'spec.template.spec.restartPolicy': 'Always',
        'spec.template.spec.containers[0].imagePullPolicy': 'IfNotPresent',
        'spec.template.spec.enableServiceLinks': undefined,
      },
    },
    {
      name: 'Deployment keeps explicit values; Recreate gets no rollingUpdate',
      gvk: ['apps', 'v1', 'Deployment'],
      obj: { spec: { replicas: 0, revisionHistoryLimit: 0, strategy: { type: 'Recreate' }, template: template() } },
      want: { 'spec.replicas': 0, 'spec.revisionHistoryLimit': 0, 'spec.strategy.type': 'Recreate', 'spec.strategy.rollingUpdate': undefined },
    },
    {
      name: 'DaemonSet',
      gvk: ['apps', 'v1', 'DaemonSet'],
      obj: { spec: { template: template() } },
      want: {
        'spec.updateStrategy.type': 'RollingUpdate',
        'spec.updateStrategy.rollingUpdate.maxUnavailable': 1,
        'spec.updateStrategy.rollingUpdate.maxSurge': 0,
        'spec.revisionHistoryLimit': 10,
      },
    },
    {
      name: 'StatefulSet',
      gvk: ['apps', 'v1', 'StatefulSet'],
      obj: { spec: { serviceName: 's', template: template() } },
      want: {
        'spec.replicas': 1,
        'spec.podManagementPolicy': 'OrderedReady',
        'spec.updateStrategy.type': 'RollingUpdate',
        'spec.updateStrategy.rollingUpdate.partition': 0,
        'spec.revisionHistoryLimit': 10,
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted': 'Retain',
        'spec.persistentVolumeClaimRetentionPolicy.whenScaled': 'Retain',
      },
    },
    {
      name: 'StatefulSet volume claim templates',
      gvk: ['apps', 'v1', 'StatefulSet'],
      obj: { spec: { template: template(), volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }] } },
      want: { 'spec.volumeClaimTemplates[0].spec.volumeMode': 'Filesystem', 'spec.volumeClaimTemplates[0].status.phase': 'Pending' },
    },
    { name: 'ReplicaSet', gvk: ['apps', 'v1', 'ReplicaSet'], obj: { spec: { template: template() } }, want: { 'spec.replicas': 1 } },
    {
      name: 'ReplicationController copies template labels',
      gvk: ['', 'v1', 'ReplicationController'],
      obj: { metadata: { name: 'rc' }, spec: { template: template() } },
      want: { 'spec.replicas': 1, 'spec.selector': { app: 'a' }, 'metadata.labels': { app: 'a' } },
    },
    {
      name: 'Pod',
      gvk: ['', 'v1', 'Pod'],
      obj: {
        spec: podSpec({
          containers: [
            {
              name: 'c',
              image: 'nginx',
              ports: [{ containerPort: 80 }],
              resources: { limits: { cpu: '1' }, requests: { memory: '1Gi' } },
              livenessProbe: { httpGet: { port: 80 } },
              env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            },
          ],
        }),
      },
      want: {
        'spec.restartPolicy': 'Always',
        'spec.terminationGracePeriodSeconds': 30,
        'spec.dnsPolicy': 'ClusterFirst',
        'spec.schedulerName': 'default-scheduler',
        'spec.securityContext': {},
        'spec.enableServiceLinks': true,
        'spec.containers[0].terminationMessagePath': '/dev/termination-log',
        'spec.containers[0].terminationMessagePolicy': 'File',
        'spec.containers[0].imagePullPolicy': 'Always',
        'spec.containers[0].ports[0].protocol': 'TCP',
        'spec.containers[0].ports[0].hostPort': undefined,
        'spec.containers[0].resources.requests': { memory: '1Gi', cpu: '1' },
        'spec.containers[0].livenessProbe.periodSeconds': 10,
        'spec.containers[0].livenessProbe.timeoutSeconds': 1,
        'spec.containers[0].livenessProbe.successThreshold': 1,
        'spec.containers[0].livenessProbe.failureThreshold': 3,
        'spec.containers[0].livenessProbe.httpGet.path': '/',
        'spec.containers[0].livenessProbe.httpGet.scheme': 'HTTP',
        'spec.containers[0].env[0].valueFrom.fieldRef.apiVersion': 'v1',
      },
    },
    {
      name: 'image pull policy follows the tag',
      gvk: ['', 'v1', 'Pod'],
      obj: {
        spec: {
          containers: [
            { name: 'a', image: 'nginx:latest' },
            { name: 'b', image: 'registry:5000/app:1.0' },
            { name: 'c', image: 'registry:5000/app' },
            { name: 'd', image: 'app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' },
            { name: 'e', image: 'app', imagePullPolicy: 'Never' },
          ],
          initContainers: [{ name: 'i', image: 'busybox' }],
        },
      },
      want: {
        'spec.containers[0].imagePullPolicy': 'Always',
        'spec.containers[1].imagePullPolicy': 'IfNotPresent',
        'spec.containers[2].imagePullPolicy': 'Always',
        'spec.containers[3].imagePullPolicy': 'IfNotPresent',
        'spec.containers[4].imagePullPolicy': 'Never',
        'spec.initContainers[0].imagePullPolicy': 'Always',
      },
    },
    {
      name: 'host network pods get host ports',
      gvk: ['', 'v1', 'Pod'],
      obj: { spec: podSpec({ hostNetwork: true, containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] }) },
      want: { 'spec.containers[0].ports[0].hostPort': 8080 },
    },
    {
      name: 'volumes: implied emptyDir and default modes',
      gvk: ['', 'v1', 'Pod'],
      obj: { spec: podSpec({ volumes: [{ name: 'scratch' }, { name: 's', secret: { secretName: 's' } }, { name: 'cm', configMap: { name: 'cm', defaultMode: 256 } }] }) },
      want: { 'spec.volumes[0].emptyDir': {}, 'spec.volumes[1].secret.defaultMode': 420, 'spec.volumes[1].emptyDir': undefined, 'spec.volumes[2].configMap.defaultMode': 256 },
    },
    {
      name: 'PodTemplate: PodSpec defaults but no pod-only ones',
      gvk: ['', 'v1', 'PodTemplate'],
      obj: { template: template() },
      want: { 'template.spec.restartPolicy': 'Always', 'template.spec.schedulerName': 'default-scheduler', 'template.spec.enableServiceLinks': undefined },
    },
    {
      name: 'Service',
      gvk: ['', 'v1', 'Service'],
      obj: { spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP', targetPort: 'dns' }], selector: { app: 'a' } } },
      want: {
        'spec.type': 'ClusterIP',
        'spec.sessionAffinity': 'None',
        'spec.sessionAffinityConfig': undefined,
        'spec.internalTrafficPolicy': 'Cluster',
        'spec.ipFamilyPolicy': 'SingleStack',
        'spec.externalTrafficPolicy': undefined,
        'spec.ports[0].protocol': 'TCP',
        'spec.ports[0].targetPort': 80,
        'spec.ports[1].protocol': 'UDP',
        'spec.ports[1].targetPort': 'dns',
      },
    },
    {
      name: 'Service ClientIP affinity and NodePort',
      gvk: ['', 'v1', 'Service'],
      obj: { spec: { type: 'NodePort', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] } },
      want: { 'spec.sessionAffinityConfig.clientIP.timeoutSeconds': 10800, 'spec.externalTrafficPolicy': 'Cluster', 'spec.allocateLoadBalancerNodePorts': undefined },
    },
    {
      name: 'Service LoadBalancer',
      gvk: ['', 'v1', 'Service'],
      obj: { spec: { type: 'LoadBalancer', ports: [{ port: 443 }] } },
      want: { 'spec.allocateLoadBalancerNodePorts': true, 'spec.externalTrafficPolicy': 'Cluster' },
    },
    {
      name: 'Service ExternalName',
      gvk: ['', 'v1', 'Service'],
      obj: { spec: { type: 'ExternalName', externalName: 'example.com' } },
      want: { 'spec.internalTrafficPolicy': undefined, 'spec.ipFamilyPolicy': undefined },
    },
    {
      name: 'ValidatingWebhookConfiguration',
      gvk: ['admissionregistration.orch.io', 'v1', 'ValidatingWebhookConfiguration'],
      obj: {
        webhooks: [
          {
            name: 'w.example.com',
            clientConfig: { service: { namespace: 'n', name: 's' } },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
      want: {
        'webhooks[0].failurePolicy': 'Fail',
        'webhooks[0].matchPolicy': 'Equivalent',
        'webhooks[0].timeoutSeconds': 10,
        'webhooks[0].namespaceSelector': {},
        'webhooks[0].objectSelector': {},
        'webhooks[0].rules[0].scope': '*',
        'webhooks[0].clientConfig.service.port': 443,
        'webhooks[0].reinvocationPolicy': undefined,
      },
    },
    {
      name: 'MutatingWebhookConfiguration',
      gvk: ['admissionregistration.orch.io', 'v1', 'MutatingWebhookConfiguration'],
      obj: { webhooks: [{ name: 'm.example.com', failurePolicy: 'Ignore', timeoutSeconds: 3, clientConfig: { url: 'https://x' }, sideEffects: 'None', admissionReviewVersions: ['v1'] }] },
      want: { 'webhooks[0].failurePolicy': 'Ignore', 'webhooks[0].timeoutSeconds': 3, 'webhooks[0].reinvocationPolicy': 'Never', 'webhooks[0].matchPolicy': 'Equivalent' },
    },
    {
      name: 'flowcontrol: nominalConcurrencyShares 30 when unspecified',
      gvk: ['flowcontrol.apiserver.orch.io', 'v1', 'PriorityLevelConfiguration'],
      obj: { spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } },
      want: {
        'spec.limited.nominalConcurrencyShares': 30,
        'spec.limited.lendablePercent': 0,
        'spec.limited.limitResponse.queuing.queues': 64,
        'spec.limited.limitResponse.queuing.handSize': 8,
        'spec.limited.limitResponse.queuing.queueLengthLimit': 50,
      },
    },
    {
      name: 'flowcontrol: explicit 0 stays 0, null is unspecified',
      gvk: ['flowcontrol.apiserver.orch.io', 'v1', 'PriorityLevelConfigurationList'],
      obj: {
        items: [
          { spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, lendablePercent: 10, limitResponse: { type: 'Reject' } } } },
          { spec: { type: 'Limited', limited: { nominalConcurrencyShares: null, limitResponse: { type: 'Reject' } } } },
          { spec: { type: 'Exempt', exempt: {} } },
        ],
      },
      want: {
        'items[0].spec.limited.nominalConcurrencyShares': 0,
        'items[0].spec.limited.lendablePercent': 10,
        'items[1].spec.limited.nominalConcurrencyShares': 30,
        'items[2].spec.exempt.nominalConcurrencyShares': 0,
        'items[2].spec.exempt.lendablePercent': 0,
      },
    },
    {
      name: 'FlowSchema matching precedence',
      gvk: ['flowcontrol.apiserver.orch.io', 'v1', 'FlowSchema'],
      obj: { spec: { priorityLevelConfiguration: { name: 'p' } } },
      want: { 'spec.matchingPrecedence': 1000 },
    },
    {
      name: 'Job',
      gvk: ['batch', 'v1', 'Job'],
      obj: { spec: { template: template({ restartPolicy: 'Never' }) } },
      want: {
        'spec.completions': 1,
        'spec.parallelism': 1,
        'spec.backoffLimit': 6,
        'spec.completionMode': 'NonIndexed',
        'spec.suspend': false,
        'spec.podReplacementPolicy': 'TerminatingOrFailed',
        'metadata.labels': { app: 'a' },
        'spec.template.spec.restartPolicy': 'Never',
      },
    },
    {
      name: 'Job with parallelism only',
      gvk: ['batch', 'v1', 'Job'],
      obj: { spec: { parallelism: 3, template: template() } },
      want: { 'spec.parallelism': 3, 'spec.completions': undefined },
    },
    {
      name: 'CronJob',
      gvk: ['batch', 'v1', 'CronJob'],
      obj: { spec: { schedule: '* * * * *', jobTemplate: { spec: { template: template() } } } },
      want: {
        'spec.concurrencyPolicy': 'Allow',
        'spec.suspend': false,
        'spec.successfulJobsHistoryLimit': 3,
        'spec.failedJobsHistoryLimit': 1,
        'spec.jobTemplate.spec.template.spec.dnsPolicy': 'ClusterFirst',
        'spec.jobTemplate.spec.backoffLimit': undefined,
      },
    },
    {
      name: 'Namespace on create',
      gvk: ['', 'v1', 'Namespace'],
      obj: { metadata: { name: 'team-a' } },
      want: { 'spec.finalizers': ['orch'], 'metadata.labels': { 'orch.io/metadata.name': 'team-a' }, 'status.phase': 'Active' },
    },
    {
      name: 'Namespace on update keeps finalizers off',
      gvk: ['', 'v1', 'Namespace'],
      obj: { metadata: { name: 'team-a' } },
      options: { operation: 'update' },
      want: { 'spec.finalizers': undefined },
    },
    {
      name: 'HorizontalPodAutoscaler',
      gvk: ['autoscaling', 'v2', 'HorizontalPodAutoscaler'],
      obj: { spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 5, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } } },
      want: {
        'spec.minReplicas': 1,
        'spec.metrics[0].resource.target.averageUtilization': 80,
        'spec.behavior.scaleUp.policies[0]': { type: 'Pods', value: 4, periodSeconds: 15 },
        'spec.behavior.scaleDown.stabilizationWindowSeconds': 60,
        'spec.behavior.scaleDown.selectPolicy': 'Max',
      },
    },
    {
      name: 'RoleBinding and subjects',
      gvk: ['rbac.authorization.orch.io', 'v1', 'RoleBinding'],
      obj: { roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'u' }, { kind: 'ServiceAccount', name: 'sa', namespace: 'n' }] },
      want: { 'roleRef.apiGroup': 'rbac.authorization.orch.io', 'subjects[0].apiGroup': 'rbac.authorization.orch.io', 'subjects[1].apiGroup': undefined },
    },
    {
      name: 'NetworkPolicy',
      gvk: ['networking.orch.io', 'v1', 'NetworkPolicy'],
      obj: { spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] } },
      want: { 'spec.policyTypes': ['Ingress', 'Egress'], 'spec.egress[0].ports[0].protocol': 'TCP' },
    },
    {
      name: 'CustomResourceDefinition',
      gvk: ['apiextensions.orch.io', 'v1', 'CustomResourceDefinition'],
      obj: { spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true }] } },
      want: { 'spec.names.singular': 'widget', 'spec.names.listKind': 'WidgetList', 'spec.conversion': { strategy: 'None' }, 'status.storedVersions': ['v1'] },
    },
    { name: 'Secret', gvk: ['', 'v1', 'Secret'], obj: { data: {} }, want: { type: 'Opaque' } },
    {
      name: 'PersistentVolume',
      gvk: ['', 'v1', 'PersistentVolume'],
      obj: { spec: { capacity: { storage: '1Gi' }, hostPath: { path: '/d' } } },
      want: { 'spec.persistentVolumeReclaimPolicy': 'Retain', 'spec.volumeMode': 'Filesystem', 'status.phase': 'Pending' },
    },
    {
      name: 'declared defaults (+default)',
      gvk: ['', 'v1', 'Pod'],
      obj: { spec: podSpec({ volumes: [{ name: 'r', rbd: { monitors: ['m'], image: 'i' } }, { name: 'ls', secret: {} }] }) },
      want: { 'spec.volumes[0].rbd.pool': 'rbd', 'spec.volumes[0].rbd.user': 'admin', 'spec.volumes[0].rbd.keyring': '/etc/ceph/keyring' },
    },
    { name: 'StorageClass', gvk: ['storage.orch.io', 'v1', 'StorageClass'], obj: { provisioner: 'p' }, want: { reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' } },
    { name: 'PriorityClass', gvk: ['scheduling.orch.io', 'v1', 'PriorityClass'], obj: { value: 1 }, want: { preemptionPolicy: 'PreemptLowerPriority' } },
    { name: 'TokenRequest', gvk: ['authentication.orch.io', 'v1', 'TokenRequest'], obj: { spec: { audiences: ['a'] } }, want: { 'spec.expirationSeconds': 3600 } },
    {
      name: 'EndpointSlice ports',
      gvk: ['discovery.orch.io', 'v1', 'EndpointSlice'],
      obj: { addressType: 'IPv4', endpoints: [], ports: [{ port: 80 }] },
      want: { 'ports[0].protocol': 'TCP', 'ports[0].name': '' },
    },
  ])('$name', ({ gvk, obj, want, options }) => {
    applyDefaults(obj, ...gvk, options);
    for (const [path, value] of Object.entries(want)) expect({ path, value: at(obj, path) }).toEqual({ path, value });
  });

  it('does not add empty-string defaults that upstream omits', () => {
    const pod: Json = { spec: podSpec({ volumes: [{ name: 'cm', configMap: {} }] }) };
    applyDefaults(pod, '', 'v1', 'Pod');
    expect(at(pod, 'spec.volumes[0].configMap')).toEqual({ defaultMode: 420 });
  });

  it('is idempotent', () => {
    const d: Json = { spec: { template: template() } };
    applyDefaults(d, 'apps', 'v1', 'Deployment');
    const once = structuredClone(d);
    applyDefaults(d, 'apps', 'v1', 'Deployment');
    expect(d).toEqual(once);
  });

  it('throws for a kind without a schema', () => {
    expect(() => applyDefaults({}, 'example.com', 'v1', 'Widget')).toThrow('no schema for kind Widget');
  });
});
