import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { KubeObject } from '@orch/apimachinery';
import { RbacIndex, rbacAuthorizer, type AuthorizationAttributes, type AuthorizationResult, type Authorizer, type BindingObject, type RoleObject, type SubjectRules, type UserInfo } from '@orch/auth';
import { Gateway } from '../gateway';
import { AuthorizerProvider } from '../pipeline/authorize';
import { RegistryMirror } from './registry-mirror';

/** How long a denial waits for the authorizer's view of RBAC objects to catch up with the store. */
const CATCH_UP_MS = 1000;

const RBAC_KINDS = [
  ['roles', 'Role'],
  ['clusterroles', 'ClusterRole'],
  ['rolebindings', 'RoleBinding'],
  ['clusterrolebindings', 'ClusterRoleBinding'],
] as const;

/**
 * RBAC (`--authorization-mode=RBAC`): roles and bindings from the API, mirrored in memory and
 * indexed by subject. A request RBAC does not allow is re-decided once the mirror has caught
 * up with the store's latest revision, so a binding is effective as soon as its write is
 * acknowledged.
 */
@Injectable()
@AuthorizerProvider({ mode: 'RBAC' })
export class RbacAuthorization implements Authorizer, OnModuleInit, OnApplicationShutdown {
  readonly name = 'RBAC';
  readonly index = new RbacIndex();
  private readonly impl = rbacAuthorizer(this.index);
  private readonly mirrors: RegistryMirror[] = [];

  constructor(@Inject(Gateway) private readonly gateway: Gateway) {}

  async onModuleInit(): Promise<void> {
    for (const [resource, kind] of RBAC_KINDS) {
      const mirror = new RegistryMirror(
        this.gateway.registry('rbac.authorization.orch.io', resource),
        {
          upsert: (o: KubeObject) => this.index.upsert(kind, o as unknown as RoleObject | BindingObject),
          remove: (o: KubeObject) => this.index.remove(kind, o.metadata.namespace ?? '', o.metadata.name ?? ''),
        },
        this.gateway.logger,
      );
      await mirror.start();
      this.mirrors.push(mirror);
    }
  }

  onApplicationShutdown(): void {
    for (const m of this.mirrors) m.stop();
  }

  rulesFor(user: UserInfo, namespace: string): SubjectRules {
    return this.impl.rulesFor!(user, namespace);
  }

  /** An allow at once (no promise); anything else after the catch-up below. */
  authorize(a: AuthorizationAttributes): AuthorizationResult | Promise<AuthorizationResult> {
    const first = this.impl.authorize(a) as AuthorizationResult;
    if (first.decision === 'allow') return first;
    return this.afterCatchUp(a, first);
  }

  private async afterCatchUp(a: AuthorizationAttributes, first: AuthorizationResult): Promise<AuthorizationResult> {
    const current = await this.gateway.store.currentRevision();
    if (this.gateway.watchCache.currentRevision() >= current) return first;
    await this.gateway.watchCache.waitForRevision(current, CATCH_UP_MS);
    return this.impl.authorize(a);
  }
}

