import { objectKey, type ResourceClient, type SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { isBootstrapToken, tokenExpiration } from '../cluster-common/bootstrap-token';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';
import { SECRETS, SYSTEM_NAMESPACE } from '../../framework/resources';
import type { Secret } from '../../framework/api';

/**
 * Token cleaner (upstream tokencleaner, off by default): deletes bootstrap token secrets in
 * `orch-system` once their `expiration` has passed (an unparseable one counts as passed);
 * a token that expires later is looked at again at that moment.
 */
export class TokenCleaner extends QueueController {
  private readonly secrets: SharedInformer<Secret>;
  private readonly secretClient: ResourceClient<Secret>;

  constructor(ctx: ControllerContext) {
    super('tokencleaner', ctx);
    this.secretClient = ctx.client.resource<Secret>(SECRETS, SYSTEM_NAMESPACE);
    this.secrets = this.informer<Secret>(SECRETS);
    this.enqueueOn(this.secrets, (s) => (isBootstrapToken(s) ? objectKey(s) : undefined));
  }

  protected async sync(key: string): Promise<void> {
    const secret = this.secrets.get(key);
    if (!secret || !isBootstrapToken(secret)) return;
    const { expired, ttlMs } = tokenExpiration(secret, Date.now());
    if (expired) {
      this.logger.info('deleting expired bootstrap token', { secret: key });
      await ignoreNotFound(this.secretClient.delete(secret.metadata.name ?? '', { preconditions: { uid: secret.metadata.uid } }));
    } else if (ttlMs !== undefined) {
      this.queue.addAfter(key, ttlMs);
    }
  }
}

export const tokenCleanerController: ControllerDescriptor = { name: 'tokencleaner', serviceAccount: 'token-cleaner', disabledByDefault: true, create: (ctx) => new TokenCleaner(ctx) };
