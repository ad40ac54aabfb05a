import { parse } from 'yaml';
import { JWT_SIGNING_ALGORITHMS, type JwtIssuerConfig } from './jwt-authenticator';

/** apiVersions of an AuthenticationConfiguration file (the orch brand and the upstream spelling). */
export const AUTHENTICATION_CONFIG_VERSIONS = ['apiserver.config.orch.io/v1beta1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.orch.io/v1', 'apiserver.config.k8s.io/v1'];
/** SPEC: at most 64 jwt authenticators. */
export const MAX_JWT_AUTHENTICATORS = 64;

/** A configuration file that cannot be used; `errors` name each field (`jwt[0].issuer.url: ...`). */
export class AuthenticationConfigError extends Error {
  override name = 'AuthenticationConfigError';
  constructor(
    readonly source: string,
    readonly errors: string[],
  ) {
    super(`${source}: invalid AuthenticationConfiguration: ${errors.join('; ')}`);
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An https URL without user info, query or fragment; else why not. */
function httpsUrlProblem(v: string): string | undefined {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'must be a valid URL';
  }
  if (u.protocol !== 'https:') return 'URL scheme must be https';
  if (u.username || u.password) return 'URL must not contain a username or password';
  if (u.search || v.includes('?')) return 'URL must not contain a query';
  if (u.hash || v.includes('#')) return 'URL must not contain a fragment';
  return undefined;
}

/**
 * Parses and validates an AuthenticationConfiguration (YAML or JSON; SPEC "Authentication
 * configuration file", upstream v1beta1 validation): at most 64 `jwt` entries; issuer.url
 * https, unique, not a service-account issuer; discoveryURL https, different from url and
 * unique; audiences non-empty and distinct, audienceMatchPolicy MatchAny when more than one;
 * claimValidationRules with claim and requiredValue, claims unique; claimMappings.username
 * with claim and prefix (prefix may be empty). Expression-based rules and mappings (CEL) are
 * refused with the field named. Throws an AuthenticationConfigError listing every problem.
 */
export function parseAuthenticationConfig(text: string, source: string, opts: { serviceAccountIssuers: string[] }): JwtIssuerConfig[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new AuthenticationConfigError(source, [`not YAML or JSON: ${(e as Error).message}`]);
  }
  const errs: string[] = [];
  if (!isObj(doc)) throw new AuthenticationConfigError(source, ['the document must be an object']);
  if (!AUTHENTICATION_CONFIG_VERSIONS.includes(String(doc.apiVersion))) errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: ${AUTHENTICATION_CONFIG_VERSIONS.map((v) => JSON.stringify(v)).join(', ')}`);
  if (doc.kind !== 'AuthenticationConfiguration') errs.push(`kind: Unsupported value: ${JSON.stringify(doc.kind)}: supported values: "AuthenticationConfiguration"`);
  for (const k of Object.keys(doc)) if (!['apiVersion', 'kind', 'jwt', 'anonymous'].includes(k)) errs.push(`${k}: unknown field`);
  if (doc.anonymous !== undefined) errs.push('anonymous: not supported: use --anonymous-auth');
  const list = doc.jwt ?? [];
  if (!Array.isArray(list)) throw new AuthenticationConfigError(source, [...errs, 'jwt: must be a list']);
  if (list.length > MAX_JWT_AUTHENTICATORS) errs.push(`jwt: Too many: ${list.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`);
  const urls = new Set<string>();
  const discoveryUrls = new Set<string>();
  const out: JwtIssuerConfig[] = [];
  list.forEach((entry: unknown, i: number) => {
    const at = `jwt[${i}]`;
    if (!isObj(entry)) return void errs.push(`${at}: must be an object`);
    const issuer = isObj(entry.issuer) ? entry.issuer : {};
    const url = typeof issuer.url === 'string' ? issuer.url : '';
    if (!url) errs.push(`${at}.issuer.url: Required value`);
    else {
      const p = httpsUrlProblem(url);
      if (p) errs.push(`${at}.issuer.url: Invalid value: ${JSON.stringify(url)}: ${p}`);
      if (urls.has(url)) errs.push(`${at}.issuer.url: Duplicate value: ${JSON.stringify(url)}`);
      if (opts.serviceAccountIssuers.includes(url)) errs.push(`${at}.issuer.url: Invalid value: ${JSON.stringify(url)}: issuer URL must not overlap with the service account issuer (--service-account-issuer)`);
      urls.add(url);
    }
    const discoveryURL = typeof issuer.discoveryURL === 'string' ? issuer.discoveryURL : undefined;
    if (discoveryURL !== undefined && discoveryURL !== '') {
      const p = httpsUrlProblem(discoveryURL);
      if (p) errs.push(`${at}.issuer.discoveryURL: Invalid value: ${JSON.stringify(discoveryURL)}: ${p}`);
      if (discoveryURL === url) errs.push(`${at}.issuer.discoveryURL: Invalid value: ${JSON.stringify(discoveryURL)}: discoveryURL must be different from URL`);
      if (discoveryUrls.has(discoveryURL)) errs.push(`${at}.issuer.discoveryURL: Duplicate value: ${JSON.stringify(discoveryURL)}`);
      discoveryUrls.add(discoveryURL);
    }
    const ca = issuer.certificateAuthority;
    if (ca !== undefined && (typeof ca !== 'string' || !ca.includes('-----BEGIN CERTIFICATE-----'))) errs.push(`${at}.issuer.certificateAuthority: Invalid value: must be PEM CA certificates`);
    const audiences = Array.isArray(issuer.audiences) ? issuer.audiences : [];
    if (audiences.length === 0) errs.push(`${at}.issuer.audiences: Required value: at least one issuer.audiences is required`);
    audiences.forEach((a: unknown, j: number) => {
      if (typeof a !== 'string' || a === '') errs.push(`${at}.issuer.audiences[${j}]: Required value`);
      else if (audiences.indexOf(a) !== j) errs.push(`${at}.issuer.audiences[${j}]: Duplicate value: ${JSON.stringify(a)}`);
    });
    const policy = issuer.audienceMatchPolicy ?? '';
    if (audiences.length > 1 && policy !== 'MatchAny') errs.push(`${at}.issuer.audienceMatchPolicy: Invalid value: ${JSON.stringify(policy)}: audienceMatchPolicy must be MatchAny for multiple audiences`);
    if (audiences.length <= 1 && policy !== '' && policy !== 'MatchAny') errs.push(`${at}.issuer.audienceMatchPolicy: Invalid value: ${JSON.stringify(policy)}: audienceMatchPolicy must be empty or MatchAny for single audience`);
    const rules: { claim: string; requiredValue: string }[] = [];
    const rawRules = entry.claimValidationRules ?? [];
    if (!Array.isArray(rawRules)) errs.push(`${at}.claimValidationRules: must be a list`);
    else
      rawRules.forEach((r: unknown, j: number) => {
        const rat = `${at}.claimValidationRules[${j}]`;
        if (!isObj(r)) return void errs.push(`${rat}: must be an object`);
        if (r.expression !== undefined) return void errs.push(`${rat}.expression: not supported: use claim and requiredValue`);
        if (typeof r.claim !== 'string' || !r.claim) return void errs.push(`${rat}.claim: Required value: claim or expression is required`);
        if (rules.some((x) => x.claim === r.claim)) errs.push(`${rat}.claim: Duplicate value: ${JSON.stringify(r.claim)}`);
        rules.push({ claim: r.claim, requiredValue: typeof r.requiredValue === 'string' ? r.requiredValue : '' });
      });
    const mappings = isObj(entry.claimMappings) ? entry.claimMappings : {};
    const username = isObj(mappings.username) ? mappings.username : {};
    if (username.expression !== undefined) errs.push(`${at}.claimMappings.username.expression: not supported: use claim and prefix`);
    if (typeof username.claim !== 'string' || !username.claim) errs.push(`${at}.claimMappings.username.claim: Required value: claim or expression is required`);
    else if (typeof username.prefix !== 'string') errs.push(`${at}.claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`);
    const groups = isObj(mappings.groups) ? mappings.groups : undefined;
    if (groups?.expression !== undefined) errs.push(`${at}.claimMappings.groups.expression: not supported: use claim and prefix`);
    if (groups && groups.claim && typeof groups.prefix !== 'string') errs.push(`${at}.claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`);
    const uid = isObj(mappings.uid) ? mappings.uid : undefined;
    if (uid?.expression !== undefined) errs.push(`${at}.claimMappings.uid.expression: not supported: use claim`);
    if (mappings.extra !== undefined) errs.push(`${at}.claimMappings.extra: not supported`);
    if (entry.userValidationRules !== undefined) errs.push(`${at}.userValidationRules: not supported`);
    out.push({
      issuer: {
        url,
        ...(discoveryURL ? { discoveryURL } : {}),
        ...(typeof ca === 'string' ? { certificateAuthority: ca } : {}),
        audiences: audiences.filter((a: unknown): a is string => typeof a === 'string'),
        audienceMatchPolicy: policy === 'MatchAny' ? 'MatchAny' : '',
      },
      claimValidationRules: rules,
      claimMappings: {
        username: { claim: String(username.claim ?? ''), prefix: String(username.prefix ?? '') },
        ...(groups && typeof groups.claim === 'string' && groups.claim ? { groups: { claim: groups.claim, prefix: String(groups.prefix ?? '') } } : {}),
        ...(uid && typeof uid.claim === 'string' && uid.claim ? { uid: { claim: uid.claim } } : {}),
      },
    });
  });
  if (errs.length) throw new AuthenticationConfigError(source, errs);
  return out;
}

/** The `--oidc-*` flags (SPEC "Token from the identity provider: service flags"). */
export interface OidcFlags {
  issuerUrl: string;
  clientId: string;
  usernameClaim: string;
  /** '' when unset (then the SPEC default applies); '-' disables prefixing. */
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  /** `key=value` entries. */
  requiredClaims: string[];
  /** PEM of --oidc-ca-file, or undefined for the host roots. */
  caPem?: string;
  signingAlgs: string[];
}

/**
 * The one issuer the `--oidc-*` flags describe, with the SPEC defaults: username claim `sub`;
 * usernames prefixed with `<issuer URL>#` unless the claim is `email` or a prefix is given
 * (`-` disables prefixing); signing algorithm RS256. Throws naming the flag when the flags
 * are inconsistent.
 */
export function oidcFlagsConfig(f: OidcFlags): JwtIssuerConfig {
  const problem = httpsUrlProblem(f.issuerUrl);
  if (problem) throw new Error(`--oidc-issuer-url: ${problem}`);
  if (!f.clientId) throw new Error('--oidc-client-id must be set when --oidc-issuer-url is set');
  for (const alg of f.signingAlgs) if (!(JWT_SIGNING_ALGORITHMS as readonly string[]).includes(alg)) throw new Error(`--oidc-signing-algs: unsupported algorithm ${JSON.stringify(alg)} (supported: ${JWT_SIGNING_ALGORITHMS.join(', ')})`);
  const claim = f.usernameClaim || 'sub';
  const prefix = f.usernamePrefix === '-' ? '' : f.usernamePrefix || (claim === 'email' ? '' : `${f.issuerUrl}#`);
  const claimValidationRules = f.requiredClaims.map((kv) => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new Error(`--oidc-required-claim: ${JSON.stringify(kv)} is not key=value`);
    return { claim: kv.slice(0, eq), requiredValue: kv.slice(eq + 1) };
  });
  return {
    issuer: { url: f.issuerUrl, audiences: [f.clientId], ...(f.caPem ? { certificateAuthority: f.caPem } : {}) },
    claimValidationRules,
    claimMappings: {
      username: { claim, prefix },
      ...(f.groupsClaim ? { groups: { claim: f.groupsClaim, prefix: f.groupsPrefix } } : {}),
    },
    signingAlgorithms: f.signingAlgs.length ? f.signingAlgs : ['RS256'],
  };
}
