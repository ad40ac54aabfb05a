export { ANONYMOUS_USER, AUTHENTICATED_GROUP, MASTERS_GROUP, UNAUTHENTICATED_GROUP, anonymousUser } from './user';
export type { UserInfo } from './user';
export {
  authRequestFromIncoming,
  clientCertificateProblem,
  parsePemBundle,
  peerCertificateFromSocket,
  unionAuthenticator,
  withAuthenticatedGroup,
  x509Authenticator,
} from './authn';
export type { AuthRequest, Authenticator, PeerCertificate } from './authn';
export { writeAtomic } from './fsutil';
export { loadKubeconfig, writeKubeconfig } from './kubeconfig';
export type { KubeconfigCredentials, WriteKubeconfigOptions } from './kubeconfig';
export { CA_COMMON_NAME, DEFAULT_SERVING_HOSTS, FRONT_PROXY_CLIENT_NAME, SERVING_COMMON_NAME, ensureFrontProxyPki, ensurePki, issueClientCert, issueServingCert, selfSignedServingCert, signCsr } from './pki';
export type { CertAndKey, FrontProxyPki, Pki, PkiFiles } from './pki';
export { BOOTSTRAPPERS_GROUP, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_SECRET_TYPE, bootstrapTokenAuthenticator } from './bootstrap-token';
export type { BootstrapTokenSecret } from './bootstrap-token';
export { ALLOW, DENY, NO_OPINION, alwaysAllowAuthorizer, alwaysDenyAuthorizer, authorizerChain, nonResourceAttributes, resourceAttributes, subjectRules } from './authz';
export type { AuthorizationAttributes, AuthorizationResult, Authorizer, Decision, ResourceFields, SubjectRules } from './authz';
export { PRIVILEGED_GROUP, RbacIndex, aggregatedRules, breakdownRule, privilegedGroupAuthorizer, rbacAuthorizer, ruleAllows, ruleString, sameRules, uncoveredRules } from './rbac';
export type { BindingObject, PolicyRule, RoleObject, RoleRef, Subject } from './rbac';
export {
  AUTOUPDATE_ANNOTATION,
  BOOTSTRAP_CLUSTER_ROLES,
  BOOTSTRAP_CLUSTER_ROLE_BINDINGS,
  bootstrapRoles,
  bootstrapRoleBindings,
  CONTROLLER_ACCOUNTS,
  CONTROLLER_MANAGER_USER,
  CONTROLLER_NAMESPACE,
  CONTROLLER_ROLE_PREFIX,
  CONTROLLER_ROLE_RULES,
  NETWORK_PROXY_USER,
  NODES_GROUP,
  NODE_RULES,
  SCHEDULER_USER,
  reconcileDefault,
} from './bootstrap-policy';
export { nodeAuthorizer, nodeNameOf, podReferences } from './node-authorizer';
export type { PodReferences, PodsOnNode } from './node-authorizer';
export {
  BOUND_CLAIM,
  LEGACY_ISSUER,
  LEGACY_TOKEN_LAST_USED,
  SERVICE_ACCOUNTS_GROUP,
  SERVICE_ACCOUNT_USER_PREFIX,
  ServiceAccountTokenIssuer,
  bearerJwt,
  publicKeysFromPem,
  serviceAccountAuthenticator,
  serviceAccountKeyId,
  serviceAccountUser,
  signingAlgorithm,
} from './service-account';
export type { BoundObject, BoundTokenRequest, ServiceAccountAuthenticatorOptions, ServiceAccountLookup } from './service-account';
export { parseTokenFile, tokenFileAuthenticator } from './token-file';
export { JWT_SIGNING_ALGORITHMS, JwtAuthenticator, JwtAuthenticatorSet, fetchJsonOverHttps } from './jwt-authenticator';
export type { JsonFetcher, JwtIssuerConfig } from './jwt-authenticator';
export { AUTHENTICATION_CONFIG_VERSIONS, AuthenticationConfigError, MAX_JWT_AUTHENTICATORS, oidcFlagsConfig, parseAuthenticationConfig } from './authentication-config';
export type { OidcFlags } from './authentication-config';
export { bearerToken, cachedTokenAuthenticator } from './token-cache';
export type { TokenCacheOptions } from './token-cache';
export { requestHeaderAuthenticator } from './request-header';
export type { RequestHeaderConfig } from './request-header';
export { webhookTokenAuthenticator } from './webhook-token';
export type { ReviewPoster } from './webhook-token';
export { subjectAccessReviewOf, webhookAuthorizer } from './webhook-authorizer';
export type { WebhookAuthorizerOptions } from './webhook-authorizer';
export { abacAuthorizer, parseAbacPolicyFile } from './abac';
export type { AbacPolicy } from './abac';
export { AuthenticationFailureLimiter, failureSourceKey } from './failure-limiter';
export type { FailureLimiterOptions } from './failure-limiter';
