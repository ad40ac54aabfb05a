import { objectKey } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { isBootstrapToken, tokenExpiration } from '../cluster-common/bootstrap-token';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';
import { SECRETS, SYSTEM_NAMESPACE } from '../../framework/resources';

/**
 * Token cleaner (upstream tokencleaner, off by default): deletes bootstrap token secrets in
 * `orch-system` once their `expiration` has passed (an unparseable one counts as passed);
 * a token that expires later is looked at again at that moment.
 */
export class TokenCleaner extends QueueController {
  private readonly cache = this.informersOf({ secrets: SECRETS });
  private readonly api = this.clientsOf({ secrets: SECRETS });

  constructor(ctx: ControllerContext) {
    super('tokencleaner', ctx);
    this.enqueueOn(this.cache.secrets, (s) => (isBootstrapToken(s) ? objectKey(s) : undefined));
  }

  protected async sync(key: string): Promise<void> {
    const secret = this.cache.secrets.get(key);
    if (!secret || !isBootstrapToken(secret)) return;
    const { expired, ttlMs } = tokenExpiration(secret, Date.now());
    if (expired) {
      this.logger.info('deleting expired bootstrap token', { secret: key });
      await ignoreNotFound(this.api.secrets.inNamespace(SYSTEM_NAMESPACE).delete(secret.metadata.name ?? '', { preconditions: { uid: secret.metadata.uid } }));
    } else if (ttlMs !== undefined) {
      this.queue.addAfter(key, ttlMs);
    }
  }
}

export const tokenCleanerController: ControllerDescriptor = { name: 'tokencleaner', serviceAccount: 'token-cleaner', disabledByDefault: true, create: (ctx) => new TokenCleaner(ctx) };
