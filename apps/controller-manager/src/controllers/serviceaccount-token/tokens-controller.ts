import { generateName } from '@orch/apimachinery';
import { ApiError, isConflict, unwrapTombstone } from '@orch/client';
import { disabledController, type ControllerContext, type ControllerDescriptor } from '../../framework/controller';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';
import { SECRETS, SERVICEACCOUNTS } from '../../framework/resources';
import type { Secret, ServiceAccount } from '../../framework/api';
import { SERVICE_ACCOUNT_TOKEN_TYPE, completeTokenSecret, isTokenSecretOf, secretAccount, tokenSecretNeeds } from './secrets';
import { TokenGenerator, legacyClaims } from './token';

/**
 * A queue key: everything the sync needs even after the object is gone (upstream's
 * serviceAccountQueueKey / secretQueueKey), JSON-encoded so equal keys coalesce.
 */
type TokenKey =
  | { kind: 'sa'; namespace: string; name: string; uid: string }
  | { kind: 'secret'; namespace: string; name: string; uid: string; saName: string; saUid: string };

const encode = (k: TokenKey): string => JSON.stringify(k);

/** Attempts at re-pointing an account to a replacement secret before giving up. */
const REFERENCE_UPDATE_ATTEMPTS = 5;

/**
 * Tokens controller (upstream TokensController, legacy token secrets): a secret of type
 * `orch.io/service-account-token` naming an existing account gets `token` (a signed legacy
 * JWT), `ca.crt`, `namespace` and the account's uid annotation; one naming a missing account
 * is deleted; deleting an account deletes its token secrets. A token secret the account
 * lists in `secrets` that gets deleted is replaced by a new `<account>-token-<suffix>`
 * secret, and the account's reference updated (SPEC "Tokens", older auto-created model).
 */
export class TokensController extends QueueController {
  private readonly cache = this.informersOf({ accounts: SERVICEACCOUNTS, secrets: SECRETS });
  private readonly api = this.clientsOf({ accounts: SERVICEACCOUNTS, secrets: SECRETS });

  constructor(
    ctx: ControllerContext,
    private readonly tokens: TokenGenerator,
  ) {
    super('serviceaccount-token', ctx);
    this.cache.accounts.addEventHandler({
      onDelete: (obj) => {
        const sa = unwrapTombstone(obj);
        this.queue.add(encode({ kind: 'sa', namespace: sa.metadata.namespace ?? '', name: sa.metadata.name ?? '', uid: sa.metadata.uid ?? '' }));
      },
    });
    this.enqueueOn(this.cache.secrets, (s) => {
      const ref = secretAccount(s);
      if (!ref) return undefined;
      return encode({ kind: 'secret', namespace: s.metadata.namespace ?? '', name: s.metadata.name ?? '', uid: s.metadata.uid ?? '', saName: ref.name, saUid: ref.uid });
    });
  }

  protected async sync(raw: string): Promise<void> {
    const key = JSON.parse(raw) as TokenKey;
    if (key.kind === 'sa') await this.syncServiceAccount(key);
    else await this.syncSecret(key);
  }

  /** A deleted account takes its token secrets with it (upstream deleteTokens). */
  private async syncServiceAccount(key: Extract<TokenKey, { kind: 'sa' }>): Promise<void> {
    const sa = this.cache.accounts.get(`${key.namespace}/${key.name}`);
    if (sa && sa.metadata.uid === key.uid) return;
    const gone = { metadata: { name: key.name, uid: key.uid } };
    for (const secret of this.cache.secrets.byIndex('namespace', key.namespace)) {
      if (isTokenSecretOf(secret, gone)) await this.deleteSecret(secret);
    }
  }

  private async syncSecret(key: Extract<TokenKey, { kind: 'secret' }>): Promise<void> {
    const cached = this.cache.secrets.get(`${key.namespace}/${key.name}`);
    const secret = cached && cached.metadata.uid === key.uid ? cached : undefined;
    if (!secret) {
      // Deleted (a secret re-created under the same name is not a deletion to repair).
      if (cached) return;
      const sa = this.cachedAccount(key.namespace, key.saName, key.saUid);
      if (sa && (sa.secrets ?? []).some((r) => r.name === key.name)) await this.replaceSecret(sa, key.name);
      return;
    }
    const sa = this.cachedAccount(key.namespace, key.saName, key.saUid) ?? (await this.liveAccount(key.namespace, key.saName, key.saUid));
    if (!sa) {
      this.logger.info('service account does not exist, deleting token secret', { namespace: key.namespace, secret: key.name });
      await this.deleteSecret(secret);
      return;
    }
    if (!Object.values(tokenSecretNeeds(secret, this.ctx.options.rootCaPem)).some(Boolean)) return;
    // Write from the live copy: the cache may lag behind a token written moments ago.
    const live = await ignoreNotFound(this.api.secrets.inNamespace(key.namespace).get(key.name));
    if (!live || live.metadata.uid !== key.uid) return;
    const needs = tokenSecretNeeds(live, this.ctx.options.rootCaPem);
    if (!Object.values(needs).some(Boolean)) return;
    const token = needs.token ? await this.tokenFor(sa, live.metadata.name ?? '') : undefined;
    await this.api.secrets.inNamespace(key.namespace).update(completeTokenSecret(live, sa, this.ctx.options.rootCaPem, needs, token));
  }

  private tokenFor(sa: ServiceAccount, secretName: string): Promise<string> {
    return this.tokens.generate(
      legacyClaims({ namespace: sa.metadata.namespace ?? '', serviceAccountName: sa.metadata.name ?? '', serviceAccountUid: sa.metadata.uid ?? '', secretName }),
    );
  }

  private cachedAccount(namespace: string, name: string, uid: string): ServiceAccount | undefined {
    const sa = this.cache.accounts.get(`${namespace}/${name}`);
    return sa && (!uid || sa.metadata.uid === uid) ? sa : undefined;
  }

  /** The account from the gateway, for an account created so recently the cache lacks it. */
  private async liveAccount(namespace: string, name: string, uid: string): Promise<ServiceAccount | undefined> {
    const sa = await ignoreNotFound(this.api.accounts.inNamespace(namespace).get(name));
    return sa && (!uid || sa.metadata.uid === uid) ? sa : undefined;
  }

  private async deleteSecret(secret: Secret): Promise<void> {
    await ignoreNotFound(this.api.secrets.inNamespace(secret.metadata.namespace ?? '').delete(secret.metadata.name ?? '', { preconditions: { uid: secret.metadata.uid } }));
  }

  /**
   * The older auto-created model (upstream ensureReferencedToken before 1.24): a new token
   * secret replaces the deleted `oldName`, and the account's reference moves to it. If the
   * account cannot be updated, the new secret is deleted again.
   */
  private async replaceSecret(sa: ServiceAccount, oldName: string): Promise<void> {
    const namespace = sa.metadata.namespace ?? '';
    const name = generateName(`${sa.metadata.name}-token-`);
    const blank: Secret = { apiVersion: 'v1', kind: 'Secret', type: SERVICE_ACCOUNT_TOKEN_TYPE, metadata: { name, namespace } };
    const complete = completeTokenSecret(blank, sa, this.ctx.options.rootCaPem, { ca: true, namespace: true, token: true }, await this.tokenFor(sa, name));
    try {
      await this.api.secrets.inNamespace(namespace).create(complete);
    } catch (err) {
      // A terminating namespace refuses new content: the account is going away too.
      if (err instanceof ApiError && err.code === 403) return;
      throw err;
    }
    try {
      await this.repointReference(namespace, sa.metadata.name ?? '', sa.metadata.uid ?? '', oldName, name);
      this.logger.info('replaced deleted token secret', { namespace, serviceAccount: sa.metadata.name, deleted: oldName, created: name });
    } catch (err) {
      await ignoreNotFound(this.api.secrets.inNamespace(namespace).delete(name));
      throw err;
    }
  }

  private async repointReference(namespace: string, saName: string, saUid: string, oldName: string, newName: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const sa = await this.api.accounts.inNamespace(namespace).get(saName);
      if (sa.metadata.uid !== saUid) throw new Error(`service account ${namespace}/${saName} was re-created`);
      const refs = (sa.secrets ?? []).filter((r) => r.name !== oldName);
      refs.push({ name: newName });
      try {
        await this.api.accounts.inNamespace(namespace).update({ ...structuredClone(sa), secrets: refs });
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= REFERENCE_UPDATE_ATTEMPTS) throw err;
      }
    }
  }
}

/** Stands in when no signing key was given: logs once and does nothing (upstream skips the controller). */
export const serviceAccountTokenController: ControllerDescriptor = {
  name: 'serviceaccount-token',
  create: (ctx) => (ctx.options.serviceAccountKeyPem ? new TokensController(ctx, new TokenGenerator(ctx.options.serviceAccountKeyPem)) : disabledController(ctx, 'serviceaccount-token', 'no --service-account-private-key-file given')),
};
