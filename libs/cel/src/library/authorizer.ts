// Authorizer library (SPEC "Validation expressions": group(g).resource(r) then optional
// subresource, namespace, name, then check(verb) giving a decision with allowed() and
// reason(); path(p).check(httpVerb); serviceAccount(ns, name); alpha fieldSelector and
// labelSelector; upstream apiserver/pkg/cel/library/authz.go). The gateway supplies the
// authorization itself through {@link CelAuthorizer}.

import { type Environment } from '../engine';

const sync = { async: false };

/** The user on whose behalf checks run. */
export interface CelUserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** One authorization question, as the gateway's authorizers take it. */
export interface CelAuthorizationAttributes {
  readonly user: CelUserInfo;
  readonly verb: string;
  /** true for group/resource checks, false for path checks. */
  readonly resourceRequest: boolean;
  readonly apiGroup?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly path?: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

export interface CelAuthorizationDecision {
  readonly decision: 'allow' | 'deny' | 'no-opinion';
  readonly reason?: string;
  /** Set when the authorizer failed (the decision is then not allowed). */
  readonly error?: string;
}

/** What the authorizer library asks the gateway. */
export interface CelAuthorizer {
  authorize(attributes: CelAuthorizationAttributes): CelAuthorizationDecision | Promise<CelAuthorizationDecision>;
}

/** The `authorizer` variable: checks on behalf of one user. */
export class AuthorizerValue {
  /** `authorizer.requestResource` (admission policies): the resource of the request being admitted. */
  readonly requestResource?: ResourceCheckValue;

  constructor(
    readonly authorizer: CelAuthorizer,
    readonly user: CelUserInfo,
    requestResource?: Omit<ResourceCheckSpec, 'authz'>,
  ) {
    if (requestResource) this.requestResource = new ResourceCheckValue({ ...requestResource, authz: this });
  }
}

export class PathCheckValue {
  constructor(
    readonly authz: AuthorizerValue,
    readonly path: string,
  ) {}
}

export class GroupCheckValue {
  constructor(
    readonly authz: AuthorizerValue,
    readonly group: string,
  ) {}
}

interface ResourceCheckSpec {
  readonly authz: AuthorizerValue;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

export class ResourceCheckValue {
  constructor(readonly spec: ResourceCheckSpec) {}

  with(change: Partial<Omit<ResourceCheckSpec, 'authz' | 'group' | 'resource'>>): ResourceCheckValue {
    return new ResourceCheckValue({ ...this.spec, ...change });
  }
}

export class DecisionValue {
  constructor(readonly result: CelAuthorizationDecision) {}

  allowed(): boolean {
    return this.result.decision === 'allow' && !this.result.error;
  }

  reason(): string {
    return this.result.reason ?? '';
  }

  errored(): boolean {
    return this.result.error !== undefined;
  }

  error(): string {
    return this.result.error ?? '';
  }
}

async function decide(authz: AuthorizerValue, attrs: Omit<CelAuthorizationAttributes, 'user'>): Promise<DecisionValue> {
  try {
    return new DecisionValue(await authz.authorizer.authorize({ ...attrs, user: authz.user }));
  } catch (e) {
    return new DecisionValue({ decision: 'no-opinion', error: (e as Error).message });
  }
}

const T = 'orch.authorization';

export function registerAuthorizer(env: Environment): void {
  env.registerType(`${T}.PathCheck`, PathCheckValue);
  env.registerType(`${T}.GroupCheck`, GroupCheckValue);
  env.registerType(`${T}.ResourceCheck`, ResourceCheckValue);
  env.registerType(`${T}.Decision`, DecisionValue);
  env.registerType(`${T}.Authorizer`, { ctor: AuthorizerValue, fields: { requestResource: `${T}.ResourceCheck` } });
  env.registerFunction(`${T}.Authorizer.path(string): ${T}.PathCheck`, (a: AuthorizerValue, p: string) => new PathCheckValue(a, p), sync);
  env.registerFunction(`${T}.Authorizer.group(string): ${T}.GroupCheck`, (a: AuthorizerValue, g: string) => new GroupCheckValue(a, g), sync);
  env.registerFunction(
    `${T}.Authorizer.serviceAccount(string, string): ${T}.Authorizer`,
    (a: AuthorizerValue, ns: string, name: string) =>
      new AuthorizerValue(a.authorizer, {
        username: `system:serviceaccount:${ns}:${name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
      }),
    sync,
  );
  env.registerFunction(`${T}.GroupCheck.resource(string): ${T}.ResourceCheck`, (g: GroupCheckValue, r: string) => new ResourceCheckValue({ authz: g.authz, group: g.group, resource: r }), sync);
  env.registerFunction(`${T}.ResourceCheck.subresource(string): ${T}.ResourceCheck`, (r: ResourceCheckValue, s: string) => r.with({ subresource: s }), sync);
  env.registerFunction(`${T}.ResourceCheck.namespace(string): ${T}.ResourceCheck`, (r: ResourceCheckValue, s: string) => r.with({ namespace: s }), sync);
  env.registerFunction(`${T}.ResourceCheck.name(string): ${T}.ResourceCheck`, (r: ResourceCheckValue, s: string) => r.with({ name: s }), sync);
  env.registerFunction(`${T}.ResourceCheck.fieldSelector(string): ${T}.ResourceCheck`, (r: ResourceCheckValue, s: string) => r.with({ fieldSelector: s }), sync);
  env.registerFunction(`${T}.ResourceCheck.labelSelector(string): ${T}.ResourceCheck`, (r: ResourceCheckValue, s: string) => r.with({ labelSelector: s }), sync);
  env.registerFunction(
    `${T}.ResourceCheck.check(string): ${T}.Decision`,
    (r: ResourceCheckValue, verb: string) => {
      const { authz, group, resource, subresource, namespace, name, fieldSelector, labelSelector } = r.spec;
      return decide(authz, { verb, resourceRequest: true, apiGroup: group, resource, subresource, namespace, name, fieldSelector, labelSelector });
    },
    { async: true },
  );
  env.registerFunction(`${T}.PathCheck.check(string): ${T}.Decision`, (p: PathCheckValue, verb: string) => decide(p.authz, { verb: verb.toLowerCase(), resourceRequest: false, path: p.path }), { async: true });
  env.registerFunction(`${T}.Decision.allowed(): bool`, (d: DecisionValue) => d.allowed(), sync);
  env.registerFunction(`${T}.Decision.reason(): string`, (d: DecisionValue) => d.reason(), sync);
  env.registerFunction(`${T}.Decision.errored(): bool`, (d: DecisionValue) => d.errored(), sync);
  env.registerFunction(`${T}.Decision.error(): string`, (d: DecisionValue) => d.error(), sync);
}

/** The declared type of the `authorizer` variable. */
export const AUTHORIZER_TYPE = `${T}.Authorizer`;
