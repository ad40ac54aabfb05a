import { isAlreadyExists, type ResourceClient, type SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { bootstrapTokens, isBootstrapToken, signingToken, tokenExpiration } from '../cluster-common/bootstrap-token';
import { QueueController } from '../cluster-common/queue-controller';
import { CONFIGMAPS, PUBLIC_NAMESPACE, SECRETS } from '../cluster-common/resources';
import type { ConfigMap, Secret } from '../cluster-common/types';
import { CLUSTER_INFO, KUBECONFIG_KEY, clusterInfoKubeconfig, signedClusterInfoData } from './jws';

/** The one key of the signer's queue: there is a single object to sign. */
const CLUSTER_INFO_KEY = `${PUBLIC_NAMESPACE}/${CLUSTER_INFO}`;

/**
 * Bootstrap signer (upstream bootstrapsigner, off by default): keeps `cluster-info` in
 * `orch-public` signed: one detached JWS `jws-kubeconfig-<token id>` over its `kubeconfig` per
 * valid bootstrap token with `usage-bootstrap-signing: "true"`; signatures of expired,
 * deleted or non-signing tokens are removed. When cluster-info does not exist it is created
 * with the cluster-only kubeconfig of the gateway this controller talks to and the root CA
 * (in orch no installer writes it); an existing kubeconfig is never rewritten.
 */
export class BootstrapSigner extends QueueController {
  private readonly configMaps: SharedInformer<ConfigMap>;
  private readonly secrets: SharedInformer<Secret>;
  private readonly cmClient: ResourceClient<ConfigMap>;

  constructor(ctx: ControllerContext) {
    super('bootstrapsigner', ctx);
    this.cmClient = ctx.client.resource<ConfigMap>(CONFIGMAPS, PUBLIC_NAMESPACE);
    this.configMaps = this.informer<ConfigMap>(CONFIGMAPS, { namespace: PUBLIC_NAMESPACE, fieldSelector: `metadata.name=${CLUSTER_INFO}` });
    this.secrets = this.informer<Secret>(SECRETS);
    this.enqueueOn(this.configMaps, () => CLUSTER_INFO_KEY);
    this.enqueueOn(this.secrets, (s) => (isBootstrapToken(s) ? CLUSTER_INFO_KEY : undefined));
    // Sync once at start even when no event arrives (no cluster-info, no tokens yet).
    this.queue.add(CLUSTER_INFO_KEY);
  }

  protected async sync(): Promise<void> {
    const cm = this.configMaps.get(CLUSTER_INFO_KEY);
    if (!cm) {
      await this.createClusterInfo();
      return;
    }
    const now = Date.now();
    const signers = bootstrapTokens(this.secrets).filter((s) => signingToken(s, now));
    // A token's expiry is no event: come back when the next signing token expires.
    const ttls = signers.flatMap((s) => tokenExpiration(s, now).ttlMs ?? []);
    if (ttls.length) this.queue.addAfter(CLUSTER_INFO_KEY, Math.min(...ttls) + 1);
    const tokens = signers.flatMap((s) => signingToken(s, now) ?? []);
    const data = await signedClusterInfoData(cm, tokens);
    if (!data) return;
    await this.cmClient.update({ ...structuredClone(cm), data });
    this.logger.info('signed cluster-info', { tokens: tokens.map((t) => t.id) });
  }

  private async createClusterInfo(): Promise<void> {
    const kubeconfig = clusterInfoKubeconfig(this.ctx.client.config.server, this.ctx.options.rootCaPem);
    try {
      await this.cmClient.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO, namespace: PUBLIC_NAMESPACE }, data: { [KUBECONFIG_KEY]: kubeconfig } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

export const bootstrapSignerController: ControllerDescriptor = { name: 'bootstrapsigner', disabledByDefault: true, create: (ctx) => new BootstrapSigner(ctx) };
