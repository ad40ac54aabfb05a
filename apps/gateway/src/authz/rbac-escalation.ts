import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@orch/apimachinery';
import { PRIVILEGED_GROUP, resourceAttributes, ruleString, uncoveredRules, type BindingObject, type PolicyRule, type RoleObject, type UserInfo } from '@orch/auth';
import { GATEWAY_CONFIG, type GatewayConfig } from '../gateway-config';
import { AdmissionPluginProvider, admissionDenied, type AdmissionAttributes, type AdmissionPlugin, type AdmissionResource } from '../pipeline/admit';
import { RbacAuthorization } from './rbac-authorization';

const RBAC_GROUP = 'rbac.authorization.orch.io';
const ROLES = new Set(['roles', 'clusterroles']);
const BINDINGS = new Set(['rolebindings', 'clusterrolebindings']);

/**
 * RBAC escalation prevention (upstream's RBAC storage guards, SPEC issue 8 §4): creating or
 * updating a Role or ClusterRole needs every permission it grants, or the `escalate` verb on
 * it; creating or updating a binding needs the permissions of the role it references, or the
 * `bind` verb on that role. `system:masters` is exempt. Runs as a validating admission step
 * so it sees the final object of every write path (create, update, patch, apply). Enabled
 * whenever the RBAC mode is.
 */
@Injectable()
@AdmissionPluginProvider()
export class RbacEscalationPrevention implements AdmissionPlugin {
  readonly name = 'RBACEscalationPrevention';
  readonly alwaysOn = true;
  private readonly enabled: boolean;

  constructor(@Inject(RbacAuthorization) private readonly rbac: RbacAuthorization, @Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.enabled = config.options['authorization-mode'].includes('RBAC');
  }

  readonly handlesFixed = true;

  handles(operation: string, resource: AdmissionResource, subresource: string): boolean {
    return this.enabled && (operation === 'CREATE' || operation === 'UPDATE') && !subresource && resource.group === RBAC_GROUP && (ROLES.has(resource.resource) || BINDINGS.has(resource.resource));
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const user = a.userInfo;
    if (user.groups.includes(PRIVILEGED_GROUP) || !a.object) return;
    const isRole = ROLES.has(a.resource.resource);
    if (a.oldObject && !grantsChanged(isRole, a.object, a.oldObject)) return;
    if (isRole) {
      if (await this.allowedTo(user, 'escalate', a.resource.resource, a.namespace, a.name)) return;
      const role = a.object as unknown as RoleObject;
      if (role.aggregationRule?.clusterRoleSelectors?.length) throw admissionDenied(a, 'must have cluster-admin privileges to use the aggregationRule');
      this.confirmNoEscalation(a, user, role.rules ?? []);
      return;
    }
    const b = a.object as unknown as BindingObject;
    const ref = b.roleRef ?? { kind: '', name: '' };
    const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
    if (await this.allowedTo(user, 'bind', refResource, a.namespace, ref.name)) return;
    const rules = this.rbac.index.roleRefRules(a.namespace, ref);
    if (!rules) throw admissionDenied(a, `${ref.kind} ${JSON.stringify(ref.name)} not found: cannot check that you hold its permissions`);
    this.confirmNoEscalation(a, user, rules);
  }

  private async allowedTo(user: UserInfo, verb: string, resource: string, namespace: string, name: string): Promise<boolean> {
    const d = await this.rbac.authorize(resourceAttributes(user, { verb, apiGroup: RBAC_GROUP, apiVersion: 'v1', resource, namespace, name }));
    return d.decision === 'allow';
  }

  private confirmNoEscalation(a: AdmissionAttributes, user: UserInfo, requested: PolicyRule[]): void {
    const owned = this.rbac.index.rulesFor(user, a.namespace);
    const missing = uncoveredRules(owned, requested);
    if (missing.length === 0) return;
    throw admissionDenied(
      a,
      `user ${JSON.stringify(user.username)} (groups=${JSON.stringify(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${missing.map(ruleString).join('\n')}`,
    );
  }
}

/** Whether an update changes what the object grants (rules, aggregation, role reference, subjects). */
function grantsChanged(isRole: boolean, obj: KubeObject, old: KubeObject): boolean {
  const pick = (o: KubeObject) => {
    const x = o as unknown as RoleObject & BindingObject;
    return JSON.stringify(isRole ? [x.rules ?? [], x.aggregationRule ?? null] : [x.roleRef, x.subjects ?? []]);
  };
  return pick(obj) !== pick(old);
}
