import { ApiError, isAlreadyExists, unwrapTombstone, type ResourceClient, type SharedInformer } from '@orch/client';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { QueueController } from '../../framework/queue-controller';
import { NAMESPACES, SERVICEACCOUNTS } from '../../framework/resources';
import type { Namespace, ServiceAccount } from '../../framework/api';

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
  private readonly namespaces: SharedInformer<Namespace>;
  private readonly accounts: SharedInformer<ServiceAccount>;
  private readonly saClient: ResourceClient<ServiceAccount>;

  constructor(ctx: ControllerContext) {
    super('serviceaccount', ctx);
    this.saClient = ctx.client.resource<ServiceAccount>(SERVICEACCOUNTS);
    this.namespaces = this.informer<Namespace>(NAMESPACES);
    this.accounts = this.informer<ServiceAccount>(SERVICEACCOUNTS, { fieldSelector: `metadata.name=${DEFAULT_SERVICE_ACCOUNT}` });
    this.enqueueOn(this.namespaces, (ns) => ns.metadata.name);
    this.accounts.addEventHandler({ onDelete: (obj) => this.queue.add(unwrapTombstone(obj).metadata.namespace ?? '') });
  }

  protected async sync(namespace: string): Promise<void> {
    if (!namespace) return;
    const missing = missingServiceAccounts(this.namespaces.get(namespace), (name) => this.accounts.get(`${namespace}/${name}`) !== undefined);
    for (const name of missing) {
      try {
        await this.saClient.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        // A namespace that started terminating meanwhile refuses new content: nothing to do.
        if (err instanceof ApiError && err.code === 403 && this.namespaces.get(namespace)?.metadata.deletionTimestamp) continue;
        throw err;
      }
    }
  }
}

export const serviceAccountController: ControllerDescriptor = { name: 'serviceaccount', serviceAccount: 'service-account-controller', create: (ctx) => new ServiceAccountsController(ctx) };
