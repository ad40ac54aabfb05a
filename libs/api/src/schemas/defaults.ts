import { isScalar, type FieldType, type TypeSchema } from './model';
import { inlineTypes, jsonFields, schemaForKind, typeSchema } from './registry';

type Json = Record<string, unknown>;

export interface DefaultsOptions {
  /** `create` (default) also applies create-only defaults (namespace finalizers); pass `update` on updates. */
  operation?: 'create' | 'update';
}

type Defaulter = (obj: Json, opts: Required<DefaultsOptions>) => void;

const RBAC_GROUP = 'rbac.authorization.orch.io';
const NAMESPACE_NAME_LABEL = 'orch.io/metadata.name';
const NAMESPACE_FINALIZER = 'orch';
const DEFAULT_MODE = 0o644;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go's nil. */
function unset(v: unknown): boolean {
  return v === undefined || v === null;
}

/** Go's zero string, number or empty list/map. */
function empty(v: unknown): boolean {
  if (unset(v) || v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

function setIf(obj: Json, key: string, value: unknown, when: (v: unknown) => boolean = unset): void {
  if (when(obj[key])) obj[key] = structuredClone(value);
}

/** The object at `obj[key]`, created when missing (Go's embedded struct always exists). */
function child(obj: Json, key: string): Json {
  if (!isObject(obj[key])) obj[key] = {};
  return obj[key] as Json;
}

function objects(v: unknown): Json[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** Pull policy upstream derives from the image reference: Always for `:latest` or no tag/digest. */
function pullPolicy(image: unknown): string {
  if (typeof image !== 'string' || image === '') return 'IfNotPresent';
  const at = image.indexOf('@');
  const nameTag = at >= 0 ? image.slice(0, at) : image;
  const colon = nameTag.lastIndexOf(':');
  const tag = colon > nameTag.lastIndexOf('/') ? nameTag.slice(colon + 1) : '';
  return tag === 'latest' || (tag === '' && at < 0) ? 'Always' : 'IfNotPresent';
}

function requestsFromLimits(containers: unknown): void {
  for (const c of objects(containers)) {
    const res = isObject(c.resources) ? c.resources : undefined;
    if (!res || !isObject(res.limits)) continue;
    const requests = child(res, 'requests');
    for (const [k, v] of Object.entries(res.limits)) if (!(k in requests)) requests[k] = v;
  }
}

function hostNetworkPorts(containers: unknown): void {
  for (const c of objects(containers)) for (const p of objects(c.ports)) setIf(p, 'hostPort', p.containerPort, empty);
}

function webhook(mutating: boolean): Defaulter {
  return (w) => {
    setIf(w, 'failurePolicy', 'Fail');
    setIf(w, 'matchPolicy', 'Equivalent');
    setIf(w, 'namespaceSelector', {});
    setIf(w, 'objectSelector', {});
    setIf(w, 'timeoutSeconds', 10);
    if (mutating) setIf(w, 'reinvocationPolicy', 'Never');
  };
}

const port443: Defaulter = (s) => setIf(s, 'port', 443);
const fileMode: Defaulter = (s) => setIf(s, 'defaultMode', DEFAULT_MODE);
const replicasOne: Defaulter = (o) => setIf(child(o, 'spec'), 'replicas', 1);

/**
 * Upstream's SetDefaults_* functions for the built-in kinds, keyed by `pkg:Type`. They run on
 * every object of that type, parent before children, like upstream's generated defaulters.
 */
const DEFAULTERS: Record<string, Defaulter> = {
  'core/v1:Pod': (pod) => {
    const spec = child(pod, 'spec');
    requestsFromLimits(spec.containers);
    requestsFromLimits(spec.initContainers);
    setIf(spec, 'enableServiceLinks', true);
    if (spec.hostNetwork === true) {
      hostNetworkPorts(spec.containers);
      hostNetworkPorts(spec.initContainers);
    }
  },
  'core/v1:PodSpec': (spec) => {
    setIf(spec, 'dnsPolicy', 'ClusterFirst', empty);
    setIf(spec, 'restartPolicy', 'Always', empty);
    setIf(spec, 'securityContext', {});
    setIf(spec, 'terminationGracePeriodSeconds', 30);
    setIf(spec, 'schedulerName', 'default-scheduler', empty);
  },
  'core/v1:Container': (c) => {
    setIf(c, 'imagePullPolicy', pullPolicy(c.image), empty);
    setIf(c, 'terminationMessagePath', '/dev/termination-log', empty);
    setIf(c, 'terminationMessagePolicy', 'File', empty);
  },
  'core/v1:EphemeralContainerCommon': (c) => DEFAULTERS['core/v1:Container'](c, { operation: 'create' }),
  'core/v1:ImageVolumeSource': (s) => setIf(s, 'pullPolicy', pullPolicy(s.reference), empty),
  'core/v1:Probe': (p) => {
    setIf(p, 'timeoutSeconds', 1, empty);
    setIf(p, 'periodSeconds', 10, empty);
    setIf(p, 'successThreshold', 1, empty);
    setIf(p, 'failureThreshold', 3, empty);
  },
  'core/v1:HTTPGetAction': (a) => {
    setIf(a, 'path', '/', empty);
    setIf(a, 'scheme', 'HTTP', empty);
  },
  'core/v1:Volume': (v) => {
    const sources = [...jsonFields(typeSchema('io.orch.api.core.v1.VolumeSource')!).keys()];
    if (sources.every((k) => unset(v[k]))) v.emptyDir = {};
  },
  'core/v1:SecretVolumeSource': fileMode,
  'core/v1:ConfigMapVolumeSource': fileMode,
  'core/v1:DownwardAPIVolumeSource': fileMode,
  'core/v1:ProjectedVolumeSource': fileMode,
  'core/v1:ObjectFieldSelector': (s) => setIf(s, 'apiVersion', 'v1', empty),
  'core/v1:Service': (svc) => {
    const spec = child(svc, 'spec');
    setIf(spec, 'sessionAffinity', 'None', empty);
    if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
    if (spec.sessionAffinity === 'ClientIP') setIf(child(child(spec, 'sessionAffinityConfig'), 'clientIP'), 'timeoutSeconds', 10800);
    setIf(spec, 'type', 'ClusterIP', empty);
    for (const p of objects(spec.ports)) {
      setIf(p, 'protocol', 'TCP', empty);
      setIf(p, 'targetPort', p.port, empty);
    }
    const externallyAccessible =
      spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0);
    if (externallyAccessible) setIf(spec, 'externalTrafficPolicy', 'Cluster', empty);
    if (spec.type !== 'ExternalName') {
      setIf(spec, 'internalTrafficPolicy', 'Cluster');
      setIf(spec, 'ipFamilyPolicy', 'SingleStack');
    }
    if (spec.type === 'LoadBalancer') setIf(spec, 'allocateLoadBalancerNodePorts', true);
  },
  'core/v1:Endpoints': (ep) => {
    for (const s of objects(ep.subsets)) for (const p of objects(s.ports)) setIf(p, 'protocol', 'TCP', empty);
  },
  'core/v1:Secret': (s) => setIf(s, 'type', 'Opaque', empty),
  'core/v1:PersistentVolume': (pv) => {
    const spec = child(pv, 'spec');
    setIf(spec, 'persistentVolumeReclaimPolicy', 'Retain', empty);
    setIf(spec, 'volumeMode', 'Filesystem');
    setIf(child(pv, 'status'), 'phase', 'Pending', empty);
  },
  'core/v1:PersistentVolumeClaim': (pvc) => setIf(child(pvc, 'status'), 'phase', 'Pending', empty),
  'core/v1:PersistentVolumeClaimSpec': (spec) => setIf(spec, 'volumeMode', 'Filesystem'),
  'core/v1:Namespace': (ns, opts) => {
    const meta = child(ns, 'metadata');
    if (typeof meta.name === 'string' && meta.name) child(meta, 'labels')[NAMESPACE_NAME_LABEL] = meta.name;
    if (opts.operation === 'create') setIf(child(ns, 'spec'), 'finalizers', [NAMESPACE_FINALIZER]);
    setIf(child(ns, 'status'), 'phase', 'Active', empty);
  },
  'core/v1:Node': (node) => {
    const status = isObject(node.status) ? node.status : undefined;
    if (status && !unset(status.capacity)) setIf(status, 'allocatable', status.capacity);
  },
  'core/v1:LimitRangeItem': (item) => {
    if (item.type !== 'Container') return;
    const def: Json = { ...(isObject(item.max) ? item.max : {}), ...(isObject(item.default) ? item.default : {}) };
    const req: Json = { ...(isObject(item.min) ? item.min : {}), ...def, ...(isObject(item.defaultRequest) ? item.defaultRequest : {}) };
    if (Object.keys(def).length) item.default = def;
    if (Object.keys(req).length) item.defaultRequest = req;
  },
  'core/v1:ReplicationController': (rc) => {
    const spec = child(rc, 'spec');
    const template = isObject(spec.template) ? spec.template : undefined;
    const labels = template && isObject(template.metadata) ? template.metadata.labels : undefined;
    if (isObject(labels)) {
      setIf(spec, 'selector', labels, empty);
      setIf(child(rc, 'metadata'), 'labels', labels, empty);
    }
    setIf(spec, 'replicas', 1);
  },

  'apps/v1:Deployment': (d) => {
    const spec = child(d, 'spec');
    setIf(spec, 'replicas', 1);
    const strategy = child(spec, 'strategy');
    setIf(strategy, 'type', 'RollingUpdate', empty);
    if (strategy.type === 'RollingUpdate') {
      const ru = child(strategy, 'rollingUpdate');
      setIf(ru, 'maxUnavailable', '25%');
      setIf(ru, 'maxSurge', '25%');
    }
    setIf(spec, 'revisionHistoryLimit', 10);
    setIf(spec, 'progressDeadlineSeconds', 600);
  },
  'apps/v1:DaemonSet': (ds) => {
    const spec = child(ds, 'spec');
    const strategy = child(spec, 'updateStrategy');
    setIf(strategy, 'type', 'RollingUpdate', empty);
    if (strategy.type === 'RollingUpdate') {
      const ru = child(strategy, 'rollingUpdate');
      setIf(ru, 'maxUnavailable', 1);
      setIf(ru, 'maxSurge', 0);
    }
    setIf(spec, 'revisionHistoryLimit', 10);
  },
  'apps/v1:StatefulSet': (sts) => {
    const spec = child(sts, 'spec');
    setIf(spec, 'podManagementPolicy', 'OrderedReady', empty);
    const strategy = child(spec, 'updateStrategy');
    if (empty(strategy.type)) {
      strategy.type = 'RollingUpdate';
      setIf(strategy, 'rollingUpdate', {});
    }
    if (strategy.type === 'RollingUpdate' && isObject(strategy.rollingUpdate)) setIf(strategy.rollingUpdate, 'partition', 0);
    const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
    setIf(retention, 'whenDeleted', 'Retain', empty);
    setIf(retention, 'whenScaled', 'Retain', empty);
    setIf(spec, 'replicas', 1);
    setIf(spec, 'revisionHistoryLimit', 10);
  },
  'apps/v1:ReplicaSet': replicasOne,

  'batch/v1:Job': (job) => {
    const spec = child(job, 'spec');
    if (unset(spec.completions) && unset(spec.parallelism)) {
      spec.completions = 1;
      spec.parallelism = 1;
    }
    setIf(spec, 'parallelism', 1);
    setIf(spec, 'backoffLimit', unset(spec.backoffLimitPerIndex) ? 6 : 2147483647);
    const template = isObject(spec.template) ? spec.template : undefined;
    const labels = template && isObject(template.metadata) ? template.metadata.labels : undefined;
    if (isObject(labels)) setIf(child(job, 'metadata'), 'labels', labels, empty);
    setIf(spec, 'completionMode', 'NonIndexed');
    setIf(spec, 'suspend', false);
    const pfp = isObject(spec.podFailurePolicy) ? spec.podFailurePolicy : undefined;
    for (const rule of objects(pfp?.rules)) for (const p of objects(rule.onPodConditions)) setIf(p, 'status', 'True', empty);
    setIf(spec, 'podReplacementPolicy', pfp ? 'Failed' : 'TerminatingOrFailed');
  },
  'batch/v1:CronJob': (cj) => {
    const spec = child(cj, 'spec');
    setIf(spec, 'concurrencyPolicy', 'Allow', empty);
    setIf(spec, 'suspend', false);
    setIf(spec, 'successfulJobsHistoryLimit', 3);
    setIf(spec, 'failedJobsHistoryLimit', 1);
  },

  'autoscaling/v1:HorizontalPodAutoscaler': (hpa) => setIf(child(hpa, 'spec'), 'minReplicas', 1),
  'autoscaling/v2:HorizontalPodAutoscaler': (hpa) => {
    const spec = child(hpa, 'spec');
    setIf(spec, 'minReplicas', 1);
    setIf(spec, 'metrics', [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }], empty);
    const behavior = spec.behavior;
    if (!isObject(behavior)) return;
    // Unset rule fields take the upstream defaults of their direction.
    const rules = (key: string, defaults: Json) => {
      const given = isObject(behavior[key]) ? (behavior[key] as Json) : {};
      const merged: Json = { ...given, ...structuredClone(defaults) };
      for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies']) if (!unset(given[k])) merged[k] = given[k];
      behavior[key] = merged;
    };
    rules('scaleUp', {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    });
    rules('scaleDown', { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });
  },

  'rbac/v1:RoleBinding': (rb) => setIf(child(rb, 'roleRef'), 'apiGroup', RBAC_GROUP, empty),
  'rbac/v1:ClusterRoleBinding': (rb) => setIf(child(rb, 'roleRef'), 'apiGroup', RBAC_GROUP, empty),
  'rbac/v1:Subject': (s) => {
    if (s.kind === 'User' || s.kind === 'Group') setIf(s, 'apiGroup', RBAC_GROUP, empty);
  },

  'networking/v1:NetworkPolicy': (np) => {
    const spec = child(np, 'spec');
    if (empty(spec.policyTypes)) spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length ? ['Ingress', 'Egress'] : ['Ingress'];
  },
  'networking/v1:NetworkPolicyPort': (p) => setIf(p, 'protocol', 'TCP'),
  'networking/v1:IngressClass': (ic) => {
    const spec = isObject(ic.spec) ? ic.spec : undefined;
    if (spec && isObject(spec.parameters)) setIf(spec.parameters, 'scope', 'Cluster');
  },

  'storage/v1:StorageClass': (sc) => {
    setIf(sc, 'reclaimPolicy', 'Delete');
    setIf(sc, 'volumeBindingMode', 'Immediate');
  },
  'storage/v1:CSIDriver': (d) => {
    const spec = child(d, 'spec');
    setIf(spec, 'attachRequired', true);
    setIf(spec, 'podInfoOnMount', false);
    setIf(spec, 'storageCapacity', false);
    setIf(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
    setIf(spec, 'volumeLifecycleModes', ['Persistent'], empty);
    setIf(spec, 'requiresRepublish', false);
    setIf(spec, 'seLinuxMount', false);
  },

  'discovery/v1:EndpointPort': (p) => {
    setIf(p, 'name', '');
    setIf(p, 'protocol', 'TCP');
  },
  'certificates/v1:CertificateSigningRequestCondition': (c) => setIf(c, 'status', 'True', empty),

  'admissionregistration/v1:ValidatingWebhook': webhook(false),
  'admissionregistration/v1:MutatingWebhook': webhook(true),
  'admissionregistration/v1:Rule': (r) => setIf(r, 'scope', '*'),
  'admissionregistration/v1:ServiceReference': port443,

  'apiextensions/v1:CustomResourceDefinition': (crd) => {
    const spec = child(crd, 'spec');
    const names = child(spec, 'names');
    if (typeof names.kind === 'string') {
      setIf(names, 'singular', names.kind.toLowerCase(), empty);
      if (names.kind) setIf(names, 'listKind', `${names.kind}List`, empty);
    }
    setIf(spec, 'conversion', { strategy: 'None' });
    const status = child(crd, 'status');
    if (empty(status.storedVersions)) {
      const storage = objects(spec.versions).find((v) => v.storage === true);
      if (storage) status.storedVersions = [storage.name];
    }
  },
  'apiextensions/v1:ServiceReference': port443,
  'apiregistration/v1:ServiceReference': port443,
  'scheduling/v1:PriorityClass': (pc) => setIf(pc, 'preemptionPolicy', 'PreemptLowerPriority'),

  'flowcontrol/v1:FlowSchemaSpec': (spec) => setIf(spec, 'matchingPrecedence', 1000, empty),
  'flowcontrol/v1:LimitedPriorityLevelConfiguration': (l) => {
    setIf(l, 'nominalConcurrencyShares', 30);
    setIf(l, 'lendablePercent', 0);
  },
  'flowcontrol/v1:ExemptPriorityLevelConfiguration': (e) => {
    setIf(e, 'nominalConcurrencyShares', 0);
    setIf(e, 'lendablePercent', 0);
  },
  'flowcontrol/v1:QueuingConfiguration': (q) => {
    setIf(q, 'queues', 64, empty);
    setIf(q, 'handSize', 8, empty);
    setIf(q, 'queueLengthLimit', 50, empty);
  },

  'authentication/v1:TokenRequestSpec': (spec) => setIf(spec, 'expirationSeconds', 3600),
};

function typeKey(schema: TypeSchema): string {
  return `${schema.pkg}:${schema.name.slice(schema.name.lastIndexOf('.') + 1)}`;
}

function defaultValue(type: FieldType, value: unknown, opts: Required<DefaultsOptions>): void {
  if (unset(value) || isScalar(type) || !mayDefault(type)) return;
  if ('array' in type) {
    if (Array.isArray(value)) for (const item of value) defaultValue(type.array, item, opts);
    return;
  }
  if ('map' in type) {
    if (isObject(value)) for (const v of Object.values(value)) defaultValue(type.map, v, opts);
    return;
  }
  const schema = typeSchema(type.ref)!;
  if (schema.union) {
    const alt = schema.fields.find((f) => (Array.isArray(value) ? !isScalar(f.type) && 'array' in f.type : !isScalar(f.type) && 'ref' in f.type));
    if (alt && (isObject(value) || Array.isArray(value))) defaultValue(alt.type, value, opts);
    return;
  }
  if (isObject(value)) defaultStruct(STRUCT_PLANS.get(schema)!, value, opts);
}

/** What defaulting does at a struct type, worked out once per type instead of on every object. */
interface StructPlan {
  /** upstream's SetDefaults_* of the type and of the types inlined in it. */
  defaulters: Defaulter[];
  /** `+default` values; an empty-string default is invisible upstream (omitted on output), so it is not materialized. */
  defaults: Array<[string, unknown]>;
  /** The fields whose values may hold something to default, in field order. */
  children: Array<[string, FieldType]>;
}

const STRUCT_PLANS = new WeakMap<TypeSchema, StructPlan>();
const MAY_DEFAULT = new WeakMap<TypeSchema, boolean>();

/**
 * Whether a value of `type` may have anything to default: false for scalars and for types with
 * no defaults anywhere below them (the walk skips those). Makes the StructPlan of a struct type.
 */
function mayDefault(type: FieldType): boolean {
  if (isScalar(type)) return false;
  if ('array' in type) return mayDefault(type.array);
  if ('map' in type) return mayDefault(type.map);
  const schema = typeSchema(type.ref)!;
  if (schema.scalar || schema.items) return false;
  let may = MAY_DEFAULT.get(schema);
  if (may === undefined) {
    // A type reached again while its own answer is being found (recursive schemas) may default: the safe answer.
    MAY_DEFAULT.set(schema, true);
    may = schema.union ? schema.fields.some((f) => mayDefault(f.type)) : planHasWork(structPlan(schema));
    MAY_DEFAULT.set(schema, may);
  }
  return may;
}

function structPlan(schema: TypeSchema): StructPlan {
  const fields = [...jsonFields(schema)];
  const plan: StructPlan = {
    defaulters: [schema, ...inlineTypes(schema)].flatMap((t) => DEFAULTERS[typeKey(t)] ?? []),
    defaults: fields.filter(([, f]) => f.default !== undefined && f.default !== '').map(([name, f]) => [name, f.default]),
    children: fields.filter(([, f]) => mayDefault(f.type)).map(([name, f]) => [name, f.type]),
  };
  STRUCT_PLANS.set(schema, plan);
  return plan;
}

function planHasWork(plan: StructPlan): boolean {
  return plan.defaulters.length > 0 || plan.defaults.length > 0 || plan.children.length > 0;
}

const unsetOrEmptyString = (v: unknown): boolean => unset(v) || v === '';

function defaultStruct(plan: StructPlan, obj: Json, opts: Required<DefaultsOptions>): void {
  for (const d of plan.defaulters) d(obj, opts);
  for (const [name, value] of plan.defaults) setIf(obj, name, value, unsetOrEmptyString);
  for (const [name, type] of plan.children) defaultValue(type, obj[name], opts);
}

/**
 * Applies the defaults of a kind in place: those declared by the schema (`+default`) and
 * upstream's SetDefaults_* behaviour (SPEC "Versioning" values: Deployment strategy and
 * limits, DaemonSet/StatefulSet update strategies, Service and Pod defaults, webhook
 * policies, flowcontrol shares, ...). Parents are defaulted before their children. Throws
 * when the kind has no schema.
 */
export function applyDefaults(obj: Json, group: string, version: string, kind: string, options: DefaultsOptions = {}): void {
  const schema = schemaForKind(group, version, kind);
  if (!schema) throw new Error(`no schema for kind ${kind} in ${group ? `${group}/` : ''}${version}`);
  defaultValue({ ref: schema.name }, obj, { operation: options.operation ?? 'create' });
}
