import type { FieldError } from '@orch/apimachinery';
import type { coreV1 } from '@orch/api';
import type { Service } from './service';
import { dropTypeDependentFields, normalizeClusterIPs, patchAllocatedValues } from './strategy';
import { validateService, validateServiceUpdate } from './validation';

type ServiceSpec = coreV1.ServiceSpec;

/** A defaulted ClusterIP service (as the generic store hands it to validation), overridden by `spec`. */
function svc(spec: ServiceSpec): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 's', namespace: 'default' },
    spec: { type: 'ClusterIP', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster', ipFamilyPolicy: 'SingleStack', ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }], ...spec },
  };
}
const show = (errs: FieldError[]) => errs.map((e) => e.toString());

describe('validateService', () => {
  it.each([
    // --- valid shapes
    { name: 'plain ClusterIP', spec: {}, want: [] },
    { name: 'requested IP', spec: { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] }, want: [] },
    { name: 'headless without ports', spec: { clusterIP: 'None', clusterIPs: ['None'], ports: [] }, want: [] },
    { name: 'NodePort with nodePort', spec: { type: 'NodePort', externalTrafficPolicy: 'Cluster', ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }] }, want: [] },
    { name: 'same nodePort for TCP and UDP', spec: { type: 'NodePort', externalTrafficPolicy: 'Local', ports: [{ name: 'a', port: 53, protocol: 'TCP', nodePort: 30053 }, { name: 'b', port: 53, protocol: 'UDP', nodePort: 30053 }] }, want: [] },
    { name: 'ExternalName', spec: { type: 'ExternalName', externalName: 'db.example.com.', ipFamilyPolicy: undefined, internalTrafficPolicy: undefined, ports: [] }, want: [] },
    { name: 'ClientIP affinity', spec: { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } }, want: [] },
    { name: 'Local internal traffic', spec: { internalTrafficPolicy: 'Local' }, want: [] },
    // --- type and addresses
    { name: 'unknown type', spec: { type: 'Magic' }, want: ['spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "NodePort", "LoadBalancer", "ExternalName"'] },
    { name: 'not an IP', spec: { clusterIP: 'banana', clusterIPs: ['banana'] }, want: ['spec.clusterIPs[0]: Invalid value: "banana": must be a valid IPv4 address (e.g. 10.9.8.7): this cluster is IPv4 single-stack'] },
    { name: 'clusterIP and clusterIPs disagree', spec: { clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.2'] }, want: ['spec.clusterIPs: Invalid value: ["10.96.0.2"]: must match `clusterIP` in its first element'] },
    { name: 'IPv6 family', spec: { ipFamilies: ['IPv6'] }, want: ['spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster'] },
    { name: 'dual stack required', spec: { ipFamilyPolicy: 'RequireDualStack' }, want: ['spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services'] },
    { name: 'headless NodePort', spec: { type: 'NodePort', externalTrafficPolicy: 'Cluster', clusterIP: 'None', clusterIPs: ['None'] }, want: ["spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"] },
    { name: 'ExternalName without a name', spec: { type: 'ExternalName', ipFamilyPolicy: undefined, ports: [] }, want: ['spec.externalName: Required value'] },
    { name: 'ExternalName with a cluster IP', spec: { type: 'ExternalName', externalName: 'x.example', clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1'], ipFamilyPolicy: undefined }, want: ['spec.clusterIPs: Forbidden: may not be set for ExternalName services'] },
    { name: 'ClusterIP without ports', spec: { ports: [] }, want: ['spec.ports: Required value'] },
    // --- ports
    { name: 'two ports need names', spec: { ports: [{ port: 80, protocol: 'TCP' }, { name: 'b', port: 81, protocol: 'TCP' }] }, want: ['spec.ports[0].name: Required value'] },
    { name: 'duplicate port names', spec: { ports: [{ name: 'a', port: 80, protocol: 'TCP' }, { name: 'a', port: 81, protocol: 'TCP' }] }, want: ['spec.ports[1].name: Duplicate value: "a"'] },
    { name: 'duplicate port and protocol', spec: { ports: [{ name: 'a', port: 80, protocol: 'TCP' }, { name: 'b', port: 80, protocol: 'TCP' }] }, want: ['spec.ports[1]: Duplicate value: {"port":80,"protocol":"TCP"}'] },
    { name: 'port out of range', spec: { ports: [{ port: 70000, protocol: 'TCP' }] }, want: ['spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive'] },
    { name: 'unknown protocol', spec: { ports: [{ port: 80, protocol: 'ICMP' }] }, want: ['spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'] },
    { name: 'bad named targetPort', spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 'Http' }] }, want: ['spec.ports[0].targetPort: Invalid value: "Http": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'] },
    { name: 'nodePort on ClusterIP', spec: { ports: [{ port: 80, protocol: 'TCP', nodePort: 30080 }] }, want: ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"] },
    { name: 'duplicate nodePort for one protocol', spec: { type: 'NodePort', externalTrafficPolicy: 'Cluster', ports: [{ name: 'a', port: 80, protocol: 'TCP', nodePort: 30080 }, { name: 'b', port: 81, protocol: 'TCP', nodePort: 30080 }] }, want: ['spec.ports[1].nodePort: Duplicate value: 30080'] },
    // --- affinity and traffic policies
    { name: 'unknown affinity', spec: { sessionAffinity: 'Sticky' }, want: ['spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"'] },
    { name: 'affinity timeout too long', spec: { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 86401 } } }, want: ['spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400'] },
    { name: 'internal policy missing', spec: { internalTrafficPolicy: undefined }, want: ['spec.internalTrafficPolicy: Required value: must be specified when `type` is set to NodePort, LoadBalancer or ClusterIP'] },
    { name: 'internal policy unknown', spec: { internalTrafficPolicy: 'Nearby' }, want: ['spec.internalTrafficPolicy: Unsupported value: "Nearby": supported values: "Cluster", "Local"'] },
    { name: 'external policy on ClusterIP', spec: { externalTrafficPolicy: 'Local' }, want: ['spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services'] },
    { name: 'external policy missing on NodePort', spec: { type: 'NodePort' }, want: ['spec.externalTrafficPolicy: Required value'] },
    { name: 'health-check port without Local LoadBalancer', spec: { type: 'NodePort', externalTrafficPolicy: 'Cluster', healthCheckNodePort: 30100 }, want: ["spec.healthCheckNodePort: Invalid value: 30100: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"] },
  ])('$name', ({ spec, want }) => expect(show(validateService(svc(spec as ServiceSpec)))).toEqual(want));
});

describe('validateServiceUpdate', () => {
  const old = svc({ clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] });
  it.each([
    { name: 'unchanged', spec: { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] }, want: [] },
    { name: 'changed address', spec: { clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'] }, want: ['spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set'] },
    { name: 'to ExternalName drops the address', spec: { type: 'ExternalName', externalName: 'x.example', ipFamilyPolicy: undefined }, want: [] },
  ])('$name', ({ spec, want }) => expect(show(validateServiceUpdate(svc(spec as ServiceSpec), old))).toEqual(want));
});

describe('update normalization', () => {
  it.each([
    {
      name: 'a PUT without allocated values keeps them (clusterIP, node ports by name)',
      old: { type: 'NodePort', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }] },
      input: { type: 'NodePort', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
      want: { type: 'NodePort', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ports: [{ name: 'http', port: 8080, protocol: 'TCP', nodePort: 30080 }] },
    },
    {
      name: 'NodePort → ClusterIP clears the node ports and external policy left as they were',
      old: { type: 'NodePort', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], externalTrafficPolicy: 'Cluster', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }] },
      input: { type: 'ClusterIP', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], externalTrafficPolicy: 'Cluster', ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 }] },
      want: { type: 'ClusterIP', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    },
    {
      name: 'ClusterIP → ExternalName clears the addresses and families',
      old: { type: 'ClusterIP', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' },
      input: { type: 'ExternalName', externalName: 'x.example', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' },
      want: { type: 'ExternalName', externalName: 'x.example' },
    },
    {
      name: 'a changed clusterIP with clusterIPs untouched wins',
      old: { type: 'ClusterIP', clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] },
      input: { type: 'ClusterIP', clusterIP: '10.96.0.6', clusterIPs: ['10.96.0.5'] },
      want: { type: 'ClusterIP', clusterIP: '10.96.0.6', clusterIPs: ['10.96.0.6'] },
    },
  ])('$name', ({ old, input, want }) => {
    const o: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: old as ServiceSpec };
    const n: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: structuredClone(input) as ServiceSpec };
    patchAllocatedValues(n, o);
    normalizeClusterIPs(n, o);
    dropTypeDependentFields(n, o);
    expect(n.spec).toEqual(want);
  });

  it('a create with only clusterIP gets clusterIPs', () => {
    const n: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { clusterIP: 'None' } };
    normalizeClusterIPs(n, undefined);
    expect(n.spec).toEqual({ clusterIP: 'None', clusterIPs: ['None'] });
  });
});
