import { isAlreadyExists, visitOnEvents } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { bootstrapTokens, isBootstrapToken, signingToken, tokenExpiration } from '../cluster-common/bootstrap-token';
import { QueueController, selected } from '../../framework/queue-controller';
import { CONFIGMAPS, PUBLIC_NAMESPACE, SECRETS } from '../../framework/resources';
import type { Secret } from '../../framework/api';
import { CLUSTER_INFO, KUBECONFIG_KEY, clusterInfoKubeconfig, signedClusterInfoData } from './jws';

/** Upstream's public namespace: cluster-info is kept there too under the compatibility option. */
export const UPSTREAM_PUBLIC_NAMESPACE = 'kube-public';

/**
 * Bootstrap signer (upstream bootstrapsigner, off by default): keeps `cluster-info` in
 * `orch-public` (and in `kube-public` under the compatibility option) signed: one detached JWS
 * `jws-kubeconfig-<token id>` over its `kubeconfig` per valid bootstrap token with
 * `usage-bootstrap-signing: "true"`; signatures of expired, deleted or non-signing tokens are
 * removed. When cluster-info does not exist it is created with the cluster-only kubeconfig of
 * the gateway this controller talks to and the root CA (in orch no installer writes it); an
 * existing kubeconfig is never rewritten. Queue keys are `<namespace>/cluster-info`.
 */
export class BootstrapSigner extends QueueController {
  private readonly cache = this.informersOf({ configMaps: selected(CONFIGMAPS, { fieldSelector: `metadata.name=${CLUSTER_INFO}` }), secrets: SECRETS });
  private readonly api = this.clientsOf({ configMaps: CONFIGMAPS });
  private readonly keys: string[];

  constructor(ctx: ControllerContext) {
    super('bootstrapsigner', ctx);
    const namespaces = ctx.options.k8sCompatibility ? [PUBLIC_NAMESPACE, UPSTREAM_PUBLIC_NAMESPACE] : [PUBLIC_NAMESPACE];
    this.keys = namespaces.map((ns) => `${ns}/${CLUSTER_INFO}`);
    this.enqueueOn(this.cache.configMaps, (cm) => {
      const key = `${cm.metadata.namespace}/${CLUSTER_INFO}`;
      return this.keys.includes(key) ? key : undefined;
    });
    visitOnEvents(this.cache.secrets, (s) => this.enqueueAll(s), () => false);
    // Sync once at start even when no event arrives (no cluster-info, no tokens yet).
    for (const key of this.keys) this.queue.add(key);
  }

  private enqueueAll(s: Secret): void {
    if (isBootstrapToken(s)) for (const key of this.keys) this.queue.add(key);
  }

  protected async sync(key: string): Promise<void> {
    const namespace = key.slice(0, key.indexOf('/'));
    const cm = this.cache.configMaps.get(key);
    if (!cm) {
      await this.createClusterInfo(namespace);
      return;
    }
    const now = Date.now();
    const signers = bootstrapTokens(this.cache.secrets).filter((s) => signingToken(s, now));
    // A token's expiry is no event: come back when the next signing token expires.
    const ttls = signers.flatMap((s) => tokenExpiration(s, now).ttlMs ?? []);
    if (ttls.length) this.queue.addAfter(key, Math.min(...ttls) + 1);
    const tokens = signers.flatMap((s) => signingToken(s, now) ?? []);
    const data = await signedClusterInfoData(cm, tokens);
    if (!data) return;
    await this.api.configMaps.inNamespace(namespace).update({ ...structuredClone(cm), data });
    this.logger.info('signed cluster-info', { namespace, tokens: tokens.map((t) => t.id) });
  }

  private async createClusterInfo(namespace: string): Promise<void> {
    const kubeconfig = clusterInfoKubeconfig(this.ctx.client.config.server, this.ctx.options.rootCaPem);
    try {
      await this.api.configMaps.inNamespace(namespace).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO, namespace }, data: { [KUBECONFIG_KEY]: kubeconfig } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

export const bootstrapSignerController: ControllerDescriptor = { name: 'bootstrapsigner', serviceAccount: 'bootstrap-signer', disabledByDefault: true, create: (ctx) => new BootstrapSigner(ctx) };
