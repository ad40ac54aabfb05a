import { ApiError, isAlreadyExists, unwrapTombstone } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { QueueController, selected } from '../../framework/queue-controller';
import { NAMESPACES, SERVICEACCOUNTS } from '../../framework/resources';
import type { Namespace } from '../../framework/api';

/** The account every namespace gets (SPEC "Service account tokens" 4). */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/** The accounts `namespace` is missing, or none while it terminates (upstream syncNamespace). */
export function missingServiceAccounts(namespace: Namespace | undefined, existing: (name: string) => boolean): string[] {
  if (!namespace || namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') return [];
  return [DEFAULT_SERVICE_ACCOUNT].filter((name) => !existing(name));
}

/**
 * ServiceAccounts controller (upstream serviceaccounts-controller): makes sure every active
 * namespace has a `default` service account, re-creating it when deleted. Keys are namespace
 * names; account events enqueue their namespace.
 */
export class ServiceAccountsController extends QueueController {
  private readonly cache = this.informersOf({ namespaces: NAMESPACES, accounts: selected(SERVICEACCOUNTS, { fieldSelector: `metadata.name=${DEFAULT_SERVICE_ACCOUNT}` }) });
  private readonly api = this.clientsOf({ accounts: SERVICEACCOUNTS });

  constructor(ctx: ControllerContext) {
    super('serviceaccount', ctx);
    this.enqueueOn(this.cache.namespaces, (ns) => ns.metadata.name);
    this.cache.accounts.addEventHandler({ onDelete: (obj) => this.queue.add(unwrapTombstone(obj).metadata.namespace ?? '') });
  }

  protected async sync(namespace: string): Promise<void> {
    if (!namespace) return;
    const missing = missingServiceAccounts(this.cache.namespaces.get(namespace), (name) => this.cache.accounts.get(`${namespace}/${name}`) !== undefined);
    for (const name of missing) {
      try {
        await this.api.accounts.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        // A namespace that started terminating meanwhile refuses new content: nothing to do.
        if (err instanceof ApiError && err.code === 403 && this.cache.namespaces.get(namespace)?.metadata.deletionTimestamp) continue;
        throw err;
      }
    }
  }
}

export const serviceAccountController: ControllerDescriptor = { name: 'serviceaccount', serviceAccount: 'service-account-controller', create: (ctx) => new ServiceAccountsController(ctx) };
