import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import {
  NO_OPINION,
  abacAuthorizer,
  alwaysAllowAuthorizer,
  alwaysDenyAuthorizer,
  nodeAuthorizer,
  parseAbacPolicyFile,
  webhookAuthorizer,
  type AuthorizationAttributes,
  type Authorizer,
  type PodReferences,
  type UserInfo,
} from '@orch/auth';
import { Gateway } from '../gateway';
import { reviewPoster } from '../webhooks/review-poster';
import { AuthorizerProvider } from '../pipeline/authorize';
import { RbacAuthorization } from './rbac-authorization';
import { RbacEscalationPrevention } from './rbac-escalation';

/**
 * A mode answered by an authorizer of @orch/auth, `impl`: set when the provider is built, or in
 * onModuleInit when the mode is chosen (unset, the mode has no opinion). Its rules are the
 * authorizer's.
 */
abstract class AuthorizerMode implements Authorizer {
  abstract readonly name: string;
  protected impl?: Authorizer;

  authorize(a: AuthorizationAttributes) {
    return this.impl ? this.impl.authorize(a) : NO_OPINION();
  }

  rulesFor(user: UserInfo, namespace: string) {
    return this.impl!.rulesFor!(user, namespace);
  }
}

/** Node (`--authorization-mode=Node`): node identities reach what their pods use, plus the node rules. */
@Injectable()
@AuthorizerProvider({ mode: 'Node' })
export class NodeAuthorization extends AuthorizerMode {
  readonly name = 'Node';

  constructor(@Inject(Gateway) gateway: Gateway) {
    super();
    this.impl = nodeAuthorizer(async (namespace, node) => {
      const list = await gateway.registry('', 'pods').list(namespace, { fieldSelector: `spec.nodeName=${node}` });
      return list.items as PodReferences[];
    });
  }
}

@Injectable()
@AuthorizerProvider({ mode: 'AlwaysAllow' })
export class AlwaysAllowAuthorization extends AuthorizerMode {
  readonly name = 'AlwaysAllow';
  protected override impl = alwaysAllowAuthorizer();
}

@Injectable()
@AuthorizerProvider({ mode: 'AlwaysDeny' })
export class AlwaysDenyAuthorization extends AuthorizerMode {
  readonly name = 'AlwaysDeny';
  protected override impl = alwaysDenyAuthorizer();
}

/**
 * ABAC (`--authorization-mode=ABAC`): the policies of `--authorization-policy-file`, read at
 * start (a bad line fails start-up, naming it). Only loaded when the mode is chosen.
 */
@Injectable()
@AuthorizerProvider({ mode: 'ABAC' })
export class AbacAuthorization extends AuthorizerMode implements OnModuleInit {
  readonly name = 'ABAC';

  constructor(@Inject(Gateway) private readonly gateway: Gateway) {
    super();
  }

  async onModuleInit(): Promise<void> {
    const o = this.gateway.options;
    if (!o['authorization-mode'].includes('ABAC')) return;
    const file = o['authorization-policy-file'];
    if (!file) throw new Error('--authorization-policy-file must be set when --authorization-mode includes ABAC');
    this.impl = abacAuthorizer(parseAbacPolicyFile(await readFile(file, 'utf8'), file));
  }
}

/**
 * Webhook (`--authorization-mode=Webhook`): SubjectAccessReview v1 to the webhook of
 * `--authorization-webhook-config-file`, allows cached `--authorization-webhook-cache-authorized-ttl`,
 * the rest `--authorization-webhook-cache-unauthorized-ttl`. Cannot list rules.
 */
@Injectable()
@AuthorizerProvider({ mode: 'Webhook' })
export class WebhookAuthorization implements Authorizer, OnModuleInit {
  readonly name = 'Webhook';
  private impl?: Authorizer;

  constructor(@Inject(Gateway) private readonly gateway: Gateway) {}

  async onModuleInit(): Promise<void> {
    const o = this.gateway.options;
    if (!o['authorization-mode'].includes('Webhook')) return;
    const file = o['authorization-webhook-config-file'];
    if (!file) throw new Error('--authorization-webhook-config-file must be set when --authorization-mode includes Webhook');
    if (o['authorization-webhook-version'] !== 'v1') throw new Error(`--authorization-webhook-version: unsupported version ${JSON.stringify(o['authorization-webhook-version'])} (supported: v1)`);
    const post = await reviewPoster(this.gateway.webhooks, file, 'authorization-webhook-config-file');
    this.impl = webhookAuthorizer(post, { authorizedTtlMs: o['authorization-webhook-cache-authorized-ttl'], unauthorizedTtlMs: o['authorization-webhook-cache-unauthorized-ttl'] });
  }

  authorize(a: AuthorizationAttributes) {
    return this.impl ? this.impl.authorize(a) : NO_OPINION();
  }
}

/** The gateway's authorization modes, each a provider; the pipeline asks those `--authorization-mode` names, in its order. */
@Module({ providers: [RbacAuthorization, NodeAuthorization, AbacAuthorization, WebhookAuthorization, AlwaysAllowAuthorization, AlwaysDenyAuthorization, RbacEscalationPrevention] })
export class AuthorizationModule {}
