import { StatusError } from '@orch/apimachinery';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, resourceAttributes, type AuthorizationAttributes, type Authorizer, type ResourceFields, type UserInfo } from '@orch/auth';
import type { Logger } from '@orch/server-common';
import type { ApiRequest } from './api-request';
import { authorizeOrThrow } from './authorize';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** What a request asks to act as (the Impersonate-* headers), or undefined when it asks nothing. */
export interface ImpersonationRequest {
  user: string;
  groups: string[];
  uid?: string;
  extra: Record<string, string[]>;
}

function values(h: string | string[] | undefined): string[] {
  if (h === undefined) return [];
  return Array.isArray(h) ? h : [h];
}

/**
 * Reads the Impersonate-* headers (upstream WithImpersonation). Groups, uid or extras without
 * a user are a 400. Extra keys are the header suffix, lowercased and %-unescaped.
 */
export function parseImpersonation(headers: Record<string, string | string[] | undefined>): ImpersonationRequest | undefined {
  // Names, not entries or a key array: nothing made per header of every request.
  let extraHeaders = false;
  for (const name in headers) if ((extraHeaders = name.startsWith(EXTRA_PREFIX))) break;
  // No Impersonate-* header (nearly every request): nothing asked.
  if (!extraHeaders && headers[USER] === undefined && headers[GROUP] === undefined && headers[UID] === undefined) return undefined;
  const user = values(headers[USER]);
  const groups = values(headers[GROUP]).flatMap((g) => g.split(',').map((s) => s.trim())).filter(Boolean);
  const uid = values(headers[UID]);
  const extra: Record<string, string[]> = {};
  for (const name of extraHeaders ? Object.keys(headers) : []) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    const v = headers[name];
    let key = name.slice(EXTRA_PREFIX.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      throw StatusError.badRequest(`invalid impersonation extra key ${JSON.stringify(key)}`);
    }
    extra[key] = values(v).flatMap((s) => s.split(',').map((x) => x.trim())).filter(Boolean);
  }
  const asksSomething = groups.length > 0 || uid.length > 0 || Object.keys(extra).length > 0;
  if (user.length === 0) {
    if (asksSomething) throw StatusError.badRequest('requested impersonation of groups, uid or extra without impersonating a user');
    return undefined;
  }
  if (user.length > 1 || uid.length > 1) throw StatusError.badRequest('only one Impersonate-User and one Impersonate-Uid may be given');
  return { user: user[0], groups, ...(uid[0] ? { uid: uid[0] } : {}), extra };
}

/** The checks an impersonation needs: `impersonate` on users|serviceaccounts, groups, uids, userextras. */
export function impersonationChecks(actor: UserInfo, want: ImpersonationRequest): AuthorizationAttributes[] {
  const check = (fields: Omit<ResourceFields, 'verb'>) => resourceAttributes(actor, { verb: 'impersonate', ...fields });
  const checks: AuthorizationAttributes[] = [];
  if (want.user.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    const [ns, name] = want.user.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
    checks.push(check({ resource: 'serviceaccounts', namespace: ns ?? '', name: name ?? '' }));
  } else {
    checks.push(check({ resource: 'users', name: want.user }));
  }
  for (const g of want.groups) checks.push(check({ resource: 'groups', name: g }));
  if (want.uid) checks.push(check({ apiGroup: 'authentication.k8s.io', resource: 'uids', name: want.uid }));
  for (const [key, vals] of Object.entries(want.extra)) {
    for (const v of vals) checks.push(check({ apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: key, name: v }));
  }
  return checks;
}

/** The user a permitted impersonation acts as (service accounts get their groups; authenticated group added). */
export function impersonatedUser(want: ImpersonationRequest): UserInfo {
  const groups = [...want.groups];
  if (want.user.startsWith(SERVICE_ACCOUNT_PREFIX) && groups.length === 0) {
    const ns = want.user.slice(SERVICE_ACCOUNT_PREFIX.length).split(':')[0];
    groups.push('system:serviceaccounts', `system:serviceaccounts:${ns}`);
  }
  if (want.user === ANONYMOUS_USER) {
    if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP);
  } else if (!groups.includes(AUTHENTICATED_GROUP)) {
    groups.push(AUTHENTICATED_GROUP);
  }
  const user: UserInfo = { username: want.user, groups };
  if (want.uid) user.uid = want.uid;
  if (Object.keys(want.extra).length) user.extra = want.extra;
  return user;
}

/**
 * The impersonate stage (SPEC Authorization 4): with Impersonate-* headers, every part asked
 * for is authorized with the `impersonate` verb for the authenticated user (403 otherwise),
 * then the request acts as the impersonated user; who impersonated whom is logged. The
 * headers are removed so they are not forwarded (proxy). Without a promise for a request
 * without those headers.
 */
export function impersonateStage(authorizer: Authorizer, logger: Logger): (r: ApiRequest) => void | Promise<void> {
  const impersonate = async (r: ApiRequest, actor: UserInfo, want: ImpersonationRequest) => {
    for (const check of impersonationChecks(actor, want)) await authorizeOrThrow(authorizer, check);
    r.user = impersonatedUser(want);
    for (const name of Object.keys(r.req.headers)) if (name.startsWith('impersonate-')) delete r.req.headers[name];
    logger.info('impersonation', { user: actor.username, impersonatedUser: r.user.username, impersonatedGroups: r.user.groups, verb: r.info.verb, path: r.info.path });
  };
  return (r) => {
    const actor = r.authenticatedUser!;
    const want = parseImpersonation(r.req.headers);
    if (!want) {
      r.user = actor;
      return;
    }
    return impersonate(r, actor, want);
  };
}
