import { aggregatedRules, sameRules } from '@orch/auth';
import type { ControllerContext, ControllerDescriptor } from '../../framework/controller';
import { QueueController, ignoreNotFound } from '../../framework/queue-controller';
import { CLUSTER_ROLES } from '../../framework/resources';


/**
 * ClusterRole aggregation (upstream clusterrole-aggregation controller): a ClusterRole with an
 * `aggregationRule` holds exactly the rules of the other ClusterRoles its selectors match
 * ({@link aggregatedRules}); any ClusterRole change re-checks every aggregated one. Rules are
 * written with an update at the read resourceVersion (a conflict retries with backoff). The
 * RBAC authorizer reads the rules written here.
 */
export class ClusterRoleAggregationController extends QueueController {
  private readonly cache = this.informersOf({ roles: CLUSTER_ROLES });
  private readonly api = this.clientsOf({ roles: CLUSTER_ROLES });

  constructor(ctx: ControllerContext) {
    super('clusterrole-aggregation', ctx);
    const enqueueAggregated = () => {
      for (const r of this.cache.roles.list()) if (r.aggregationRule?.clusterRoleSelectors?.length) this.queue.add(r.metadata.name ?? '');
    };
    this.cache.roles.addEventHandler({ onAdd: enqueueAggregated, onUpdate: enqueueAggregated, onDelete: enqueueAggregated });
  }

  protected async sync(name: string): Promise<void> {
    const role = this.cache.roles.get(name);
    if (!role) return;
    const rules = aggregatedRules(role, this.cache.roles.list());
    if (!rules || sameRules(rules, role.rules ?? [])) return;
    this.logger.info('updating aggregated rules', { clusterRole: name, rules: rules.length });
    await ignoreNotFound(this.api.roles.update({ ...structuredClone(role), rules }));
  }
}

export const clusterRoleAggregationController: ControllerDescriptor = { name: 'clusterrole-aggregation', serviceAccount: 'clusterrole-aggregation-controller', create: (ctx) => new ClusterRoleAggregationController(ctx) };
