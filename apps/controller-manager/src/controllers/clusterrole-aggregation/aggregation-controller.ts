import { aggregatedRules, sameRules, type RoleObject } from '@orch/auth';
import type { GroupVersionResource, ResourceClient, SharedInformer } from '@orch/client';
import type { KubeObject } from '@orch/apimachinery';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';

export const CLUSTER_ROLES: GroupVersionResource = { group: 'rbac.authorization.orch.io', version: 'v1', resource: 'clusterroles' };

type ClusterRole = KubeObject & RoleObject;

/**
 * ClusterRole aggregation (upstream clusterrole-aggregation controller): a ClusterRole with an
 * `aggregationRule` holds exactly the rules of the other ClusterRoles its selectors match
 * ({@link aggregatedRules}); any ClusterRole change re-checks every aggregated one. Rules are
 * written with an update at the read resourceVersion (a conflict retries with backoff). The
 * RBAC authorizer reads the rules written here.
 */
export class ClusterRoleAggregationController extends QueueController {
  private readonly roles: SharedInformer<ClusterRole>;
  private readonly client: ResourceClient<ClusterRole>;

  constructor(ctx: ControllerContext) {
    super('clusterrole-aggregation', ctx);
    this.client = ctx.client.resource<ClusterRole>(CLUSTER_ROLES);
    this.roles = this.informer<ClusterRole>(CLUSTER_ROLES);
    const enqueueAggregated = () => {
      for (const r of this.roles.list()) if (r.aggregationRule?.clusterRoleSelectors?.length) this.queue.add(r.metadata.name ?? '');
    };
    this.roles.addEventHandler({ onAdd: enqueueAggregated, onUpdate: enqueueAggregated, onDelete: enqueueAggregated });
  }

  protected async sync(name: string): Promise<void> {
    const role = this.roles.get(name);
    if (!role) return;
    const rules = aggregatedRules(role, this.roles.list());
    if (!rules || sameRules(rules, role.rules ?? [])) return;
    this.logger.info('updating aggregated rules', { clusterRole: name, rules: rules.length });
    await ignoreNotFound(this.client.update({ ...structuredClone(role), rules }));
  }
}

export const clusterRoleAggregationController: ControllerDescriptor = { name: 'clusterrole-aggregation', serviceAccount: 'clusterrole-aggregation-controller', create: (ctx) => new ClusterRoleAggregationController(ctx) };
