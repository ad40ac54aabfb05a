import { ApiError, isAlreadyExists, type SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { QueueController } from '../../framework/queue-controller';
import { CONFIGMAPS, NAMESPACES } from '../../framework/resources';
import type { ConfigMap, Namespace } from '../../framework/api';

/** The config map published in every namespace. */
export const ROOT_CA_CONFIGMAP = 'orch-root-ca.crt';
/** Its upstream name, published too under the compatibility option (stock in-cluster clients mount it). */
export const UPSTREAM_ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const ROOT_CA_KEY = 'ca.crt';
/** upstream's description annotation, in orch words. */
export const DESCRIPTION_ANNOTATION = 'orch.io/description';
export const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the orch gateway when using internal endpoints such as the internal service IP or orch.default.svc. No other usage is guaranteed across distributions of orch clusters.';

/** What to do for one namespace: create the map, rewrite it, or nothing. */
export type PublishAction = { kind: 'none' } | { kind: 'create'; configMap: ConfigMap } | { kind: 'update'; configMap: ConfigMap };

/**
 * upstream Publisher.syncNamespace: nothing for a missing or terminating namespace; create the
 * map when absent; rewrite data and the description annotation when either drifted.
 */
export function publishAction(namespace: Namespace | undefined, current: ConfigMap | undefined, rootCaPem: string, configMapName = ROOT_CA_CONFIGMAP): PublishAction {
  const name = namespace?.metadata.name;
  if (!namespace || !name || namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') return { kind: 'none' };
  if (!current) {
    return {
      kind: 'create',
      configMap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: configMapName, namespace: name, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data: { [ROOT_CA_KEY]: rootCaPem } },
    };
  }
  const data = current.data ?? {};
  const dataOk = Object.keys(data).length === 1 && data[ROOT_CA_KEY] === rootCaPem;
  const annotationOk = current.metadata.annotations?.[DESCRIPTION_ANNOTATION] === DESCRIPTION;
  if (dataOk && annotationOk) return { kind: 'none' };
  const next = structuredClone(current) as ConfigMap;
  next.data = { [ROOT_CA_KEY]: rootCaPem };
  next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [DESCRIPTION_ANNOTATION]: DESCRIPTION };
  return { kind: 'update', configMap: next };
}

/**
 * Root CA publisher (upstream root-ca-cert-publisher): keeps an `orch-root-ca.crt` config map
 * (and `kube-root-ca.crt` under the compatibility option) holding the cluster CA (`ca.crt`) in
 * every active namespace; edits and deletions are undone.
 */
export class RootCaPublisher extends QueueController {
  private readonly cache = this.informersOf({ namespaces: NAMESPACES });
  private readonly api = this.clientsOf({ cms: CONFIGMAPS });
  /** One informer per published name (a field selector names one). */
  private readonly configMaps = new Map<string, SharedInformer<ConfigMap>>();

  constructor(ctx: ControllerContext) {
    super('root-ca-cert-publisher', ctx);
    this.enqueueOn(this.cache.namespaces, (ns) => ns.metadata.name);
    for (const name of ctx.options.k8sCompatibility ? [ROOT_CA_CONFIGMAP, UPSTREAM_ROOT_CA_CONFIGMAP] : [ROOT_CA_CONFIGMAP]) {
      const informer = this.informer<ConfigMap>(CONFIGMAPS, { fieldSelector: `metadata.name=${name}` });
      this.configMaps.set(name, informer);
      this.enqueueOn(informer, (cm) => cm.metadata.namespace);
    }
  }

  protected async sync(namespace: string): Promise<void> {
    if (!namespace) return;
    for (const [name, informer] of this.configMaps) {
      const action = publishAction(this.cache.namespaces.get(namespace), informer.get(`${namespace}/${name}`), this.ctx.options.rootCaPem, name);
      try {
        if (action.kind === 'create') await this.api.cms.create(action.configMap);
        else if (action.kind === 'update') await this.api.cms.update(action.configMap);
      } catch (err) {
        // The map exists but the cache lags (its add event requeues), or the namespace began terminating.
        if (isAlreadyExists(err)) continue;
        if (err instanceof ApiError && err.code === 403 && this.cache.namespaces.get(namespace)?.metadata.deletionTimestamp) return;
        throw err;
      }
    }
  }
}

export const rootCaCertPublisher: ControllerDescriptor = { name: 'root-ca-cert-publisher', serviceAccount: 'root-ca-cert-publisher', create: (ctx) => new RootCaPublisher(ctx) };
