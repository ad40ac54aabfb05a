export { ANONYMOUS_USER, AUTHENTICATED_GROUP, MASTERS_GROUP, UNAUTHENTICATED_GROUP, anonymousUser } from './user';
export type { UserInfo } from './user';
export {
  authRequestFromIncoming,
  peerCertificateFromSocket,
  unionAuthenticator,
  withAuthenticatedGroup,
  x509Authenticator,
} from './authn';
export type { AuthRequest, Authenticator, PeerCertificate } from './authn';
export { writeAtomic } from './fsutil';
export { loadKubeconfig, writeKubeconfig } from './kubeconfig';
export type { KubeconfigCredentials, WriteKubeconfigOptions } from './kubeconfig';
export { CA_COMMON_NAME, DEFAULT_SERVING_HOSTS, SERVING_COMMON_NAME, ensurePki, issueClientCert, selfSignedServingCert, signCsr } from './pki';
export type { CertAndKey, Pki, PkiFiles } from './pki';
export { BOOTSTRAPPERS_GROUP, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_SECRET_TYPE, bootstrapTokenAuthenticator } from './bootstrap-token';
export type { BootstrapTokenSecret } from './bootstrap-token';
export { ALLOW, DENY, NO_OPINION, alwaysAllowAuthorizer, alwaysDenyAuthorizer, authorizerChain } from './authz';
export type { AuthorizationAttributes, AuthorizationResult, Authorizer, Decision } from './authz';
