/** The authenticated identity of a request (SPEC Authentication, Users 3). All fields are opaque. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const MASTERS_GROUP = 'system:masters';

/** The identity of a request no authenticator claimed, when anonymous requests are allowed. */
export function anonymousUser(): UserInfo {
  return { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}
