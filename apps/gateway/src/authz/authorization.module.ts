import { Inject, Injectable, Module } from '@nestjs/common';
import { alwaysAllowAuthorizer, alwaysDenyAuthorizer, nodeAuthorizer, type AuthorizationAttributes, type Authorizer, type PodReferences, type UserInfo } from '@orch/auth';
import { Gateway } from '../gateway';
import { AuthorizerProvider } from '../pipeline/authorize';
import { RbacAuthorization } from './rbac-authorization';
import { RbacEscalationPrevention } from './rbac-escalation';

/** Node (`--authorization-mode=Node`): node identities reach what their pods use, plus the node rules. */
@Injectable()
@AuthorizerProvider({ mode: 'Node' })
export class NodeAuthorization implements Authorizer {
  readonly name = 'Node';
  private readonly impl: Authorizer;

  constructor(@Inject(Gateway) gateway: Gateway) {
    this.impl = nodeAuthorizer(async (namespace, node) => {
      const list = await gateway.registry('', 'pods').list(namespace, { fieldSelector: `spec.nodeName=${node}` });
      return list.items as PodReferences[];
    });
  }

  authorize(a: AuthorizationAttributes) {
    return this.impl.authorize(a);
  }

  rulesFor(user: UserInfo, namespace: string) {
    return this.impl.rulesFor!(user, namespace);
  }
}

@Injectable()
@AuthorizerProvider({ mode: 'AlwaysAllow' })
export class AlwaysAllowAuthorization implements Authorizer {
  readonly name = 'AlwaysAllow';
  private readonly impl = alwaysAllowAuthorizer();
  authorize(a: AuthorizationAttributes) {
    return this.impl.authorize(a);
  }

  rulesFor(user: UserInfo, namespace: string) {
    return this.impl.rulesFor!(user, namespace);
  }
}

@Injectable()
@AuthorizerProvider({ mode: 'AlwaysDeny' })
export class AlwaysDenyAuthorization implements Authorizer {
  readonly name = 'AlwaysDeny';
  private readonly impl = alwaysDenyAuthorizer();
  authorize(a: AuthorizationAttributes) {
    return this.impl.authorize(a);
  }

  rulesFor(user: UserInfo, namespace: string) {
    return this.impl.rulesFor!(user, namespace);
  }
}

/** The gateway's authorization modes, each a provider; the pipeline asks those `--authorization-mode` names, in its order. */
@Module({ providers: [RbacAuthorization, NodeAuthorization, AlwaysAllowAuthorization, AlwaysDenyAuthorization, RbacEscalationPrevention] })
export class AuthorizationModule {}
