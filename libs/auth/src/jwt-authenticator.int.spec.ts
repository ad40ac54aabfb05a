import { StatusError } from '@orch/apimachinery';
import { startOidcIssuer, type OidcIssuer } from '@orch/testing';
import { oidcFlagsConfig, parseAuthenticationConfig } from './authentication-config';
import { JwtAuthenticator, JwtAuthenticatorSet, type JwtIssuerConfig } from './jwt-authenticator';
import { selfSignedServingCert } from './pki';

// JWT authenticators against a real HTTPS OpenID Connect issuer (discovery + JWKS served on a
// loopback port, keys made with jose, TLS from a test CA given as the issuer's CA).
// Issuers generate RSA keys, which is CPU-bound: on a loaded 2-core machine the set-up took over
// jest's 5 s default (seen in CI), so hooks and tests here get a bound that does not measure speed.
jest.setTimeout(60_000);

let issuer: OidcIssuer;
let other: OidcIssuer;

beforeAll(async () => {
  const tls = await selfSignedServingCert(['127.0.0.1'], 'oidc-issuer');
  issuer = await startOidcIssuer(tls);
  other = await startOidcIssuer(tls);
});
afterAll(async () => {
  await issuer?.stop();
  await other?.stop();
});

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
const now = () => Math.floor(Date.now() / 1000);

type Outcome = { user: string; groups?: string[] } | { status: number } | 'not mine';
async function outcome(a: { authenticate: JwtAuthenticator['authenticate'] }, token: string): Promise<Outcome> {
  try {
    const u = await a.authenticate(bearer(token));
    return u ? { user: u.username, groups: u.groups } : 'not mine';
  } catch (e) {
    if (e instanceof StatusError) return { status: e.code };
    throw e;
  }
}

function flagsAuthenticator(extra: Partial<Parameters<typeof oidcFlagsConfig>[0]> = {}, clock?: () => number) {
  return new JwtAuthenticator(
    oidcFlagsConfig({ issuerUrl: issuer.url, clientId: 'orch', usernameClaim: '', usernamePrefix: '', groupsClaim: 'groups', groupsPrefix: 'oidc:', requiredClaims: ['tenant=blue'], caPem: issuer.caPem, signingAlgs: [], ...extra }),
    clock ? { now: clock } : {},
  );
}

describe('OIDC flags authenticator (--oidc-*)', () => {
  const a = () => flagsAuthenticator();
  const good = { sub: 'alice', aud: 'orch', tenant: 'blue', groups: ['dev', 'ops'] };

  it.each<{ name: string; token: () => Promise<string>; want: Outcome | ((o: Outcome) => boolean) }>([
    { name: 'valid', token: () => issuer.sign(good), want: { user: '', groups: ['oidc:dev', 'oidc:ops'] } },
    { name: 'expired', token: () => issuer.sign({ ...good, exp: now() - 10 }), want: { status: 401 } },
    { name: 'not yet valid (nbf in the future)', token: () => issuer.sign({ ...good, nbf: now() + 600 }), want: { status: 401 } },
    { name: 'no exp', token: () => issuer.sign({ ...good, exp: undefined }), want: { status: 401 } },
    { name: 'wrong signature (a key the issuer does not publish)', token: () => issuer.sign(good, { key: 'foreign' }), want: { status: 401 } },
    { name: 'wrong audience', token: () => issuer.sign({ ...good, aud: 'someone-else' }), want: { status: 401 } },
    { name: 'wrong issuer (another real issuer): not claimed', token: () => other.sign(good), want: 'not mine' },
    { name: 'issuer claimed falsely, signed elsewhere', token: () => other.sign({ ...good, iss: issuer.url }), want: { status: 401 } },
    { name: 'required claim missing', token: () => issuer.sign({ ...good, tenant: 'red' }), want: { status: 401 } },
    { name: 'algorithm not accepted (ES256 by a key with kid of ours)', token: () => issuer.sign(good, { alg: 'HS256' }).catch(() => 'x.y.z'), want: (o) => o === 'not mine' || (typeof o === 'object' && 'status' in o && o.status === 401) },
    { name: 'malformed: not a JWT', token: async () => 'not-a-jwt', want: 'not mine' },
    { name: 'malformed: three parts of garbage', token: async () => 'aaaa.bbbb.cccc', want: 'not mine' },
    { name: 'oversized', token: async () => `${await issuer.sign(good)}${'A'.repeat(20_000)}`, want: (o) => o === 'not mine' || (typeof o === 'object' && 'status' in o && o.status === 401) },
  ])('$name', async ({ token, want }) => {
    const got = await outcome(a(), await token());
    if (typeof want === 'function') expect(want(got)).toBe(true);
    else if (typeof want === 'object' && 'user' in want) expect(got).toEqual({ user: `${issuer.url}#alice`, groups: want.groups });
    else expect(got).toEqual(want);
  });

  it.each<{ name: string; flags: Partial<Parameters<typeof oidcFlagsConfig>[0]>; claims: Record<string, unknown>; want: () => string | number }>([
    { name: 'default: sub prefixed with the issuer URL and #', flags: {}, claims: { sub: 'alice' }, want: () => `${issuer.url}#alice` },
    { name: 'email claim: not prefixed', flags: { usernameClaim: 'email' }, claims: { sub: 'x', email: 'a@b.c' }, want: () => 'a@b.c' },
    { name: 'email claim, email_verified false: refused', flags: { usernameClaim: 'email' }, claims: { sub: 'x', email: 'a@b.c', email_verified: false }, want: () => 401 },
    { name: 'prefix -: none', flags: { usernamePrefix: '-' }, claims: { sub: 'alice' }, want: () => 'alice' },
    { name: 'explicit prefix', flags: { usernamePrefix: 'corp:' }, claims: { sub: 'alice' }, want: () => 'corp:alice' },
  ])('username: $name', async ({ flags, claims, want }) => {
    const got = await outcome(flagsAuthenticator(flags), await issuer.sign({ aud: 'orch', tenant: 'blue', ...claims }));
    const w = want();
    expect(typeof w === 'number' ? got : (got as { user: string }).user).toEqual(typeof w === 'number' ? { status: w } : w);
  });

  it('--oidc-signing-algs: an ES256 issuer is refused by the RS256 default and accepted when listed', async () => {
    const tls = await selfSignedServingCert(['127.0.0.1'], 'oidc-es');
    const es = await startOidcIssuer(tls, { alg: 'ES256' });
    try {
      const flags = { issuerUrl: es.url, caPem: es.caPem, requiredClaims: [] };
      const token = await es.sign({ sub: 'eve', aud: 'orch' });
      expect(await outcome(flagsAuthenticator(flags), token)).toEqual({ status: 401 });
      expect(await outcome(flagsAuthenticator({ ...flags, signingAlgs: ['ES256'] }), token)).toMatchObject({ user: `${es.url}#eve` });
    } finally {
      await es.stop();
    }
  });

  it('fetches keys once, again (at most every 10 s) when the issuer rotates, and the CA is checked (wrong CA: 401)', async () => {
    let t = Date.now();
    const a = flagsAuthenticator({}, () => t);
    await a.start();
    const before = issuer.hits.get('/jwks') ?? 0;
    await outcome(a, await issuer.sign(good));
    await outcome(a, await issuer.sign(good));
    expect(issuer.hits.get('/jwks') ?? 0).toBe(before);
    await issuer.rotate();
    t += 10_001;
    expect(await outcome(a, await issuer.sign(good))).toMatchObject({ user: `${issuer.url}#alice` });
    expect(issuer.hits.get('/jwks')).toBe(before + 1);
    const otherCa = (await selfSignedServingCert(['127.0.0.1'], 'x')).caPem;
    expect(await outcome(flagsAuthenticator({ caPem: otherCa }), await issuer.sign(good))).toEqual({ status: 401 });
  });

  it('a discovery document naming another issuer is refused', async () => {
    const tls = await selfSignedServingCert(['127.0.0.1'], 'oidc-liar');
    const liar = await startOidcIssuer(tls);
    liar.claimIssuer('https://somewhere.else');
    try {
      const a = flagsAuthenticator({ issuerUrl: liar.url, caPem: liar.caPem, requiredClaims: [] });
      await a.start();
      expect(a.keyError).toMatch(/does not match/);
      expect(await outcome(a, await liar.sign({ sub: 'x', aud: 'orch' }))).toEqual({ status: 401 });
    } finally {
      await liar.stop();
    }
  });

  it.each([
    { flags: { issuerUrl: 'http://insecure' }, error: /--oidc-issuer-url: URL scheme must be https/ },
    { flags: { clientId: '' }, error: /--oidc-client-id must be set/ },
    { flags: { signingAlgs: ['none'] }, error: /--oidc-signing-algs: unsupported algorithm "none"/ },
    { flags: { requiredClaims: ['novalue'] }, error: /--oidc-required-claim: "novalue" is not key=value/ },
  ])('flag error: $error', ({ flags, error }) => {
    expect(() => flagsAuthenticator(flags)).toThrow(error);
  });
});

describe('AuthenticationConfiguration jwt authenticators', () => {
  const file = (jwt: unknown[], apiVersion = 'apiserver.config.orch.io/v1beta1') => JSON.stringify({ apiVersion, kind: 'AuthenticationConfiguration', jwt });
  const entry = (over: Record<string, unknown> = {}, iss = () => issuer) => ({
    issuer: { url: iss().url, certificateAuthority: iss().caPem, audiences: ['orch', 'extra'], audienceMatchPolicy: 'MatchAny' },
    claimValidationRules: [{ claim: 'tenant', requiredValue: 'blue' }],
    claimMappings: { username: { claim: 'sub', prefix: 'idp:' }, groups: { claim: 'roles', prefix: '' }, uid: { claim: 'oid' } },
    ...over,
  });
  const build = (configs: JwtIssuerConfig[]) => new JwtAuthenticatorSet(configs.map((c) => new JwtAuthenticator(c)));
  const good = { sub: 'bob', aud: ['extra'], tenant: 'blue', roles: 'admins', oid: 'u-1' };

  it.each<{ name: string; token: () => Promise<string>; want: Outcome }>([
    { name: 'valid (one of the audiences, MatchAny)', token: () => issuer.sign(good), want: { user: 'idp:bob', groups: ['admins'] } },
    { name: 'valid, second issuer', token: () => other.sign(good), want: { user: 'idp:bob', groups: ['admins'] } },
    { name: 'expired', token: () => issuer.sign({ ...good, exp: now() - 5 }), want: { status: 401 } },
    { name: 'not yet valid', token: () => issuer.sign({ ...good, nbf: now() + 3600 }), want: { status: 401 } },
    { name: 'wrong signature', token: () => issuer.sign(good, { key: 'foreign' }), want: { status: 401 } },
    { name: 'wrong audience', token: () => issuer.sign({ ...good, aud: ['nobody'] }), want: { status: 401 } },
    { name: 'wrong issuer', token: () => issuer.sign({ ...good, iss: 'https://unknown.example' }), want: 'not mine' },
    { name: 'claim validation rule fails', token: () => issuer.sign({ ...good, tenant: 'red' }), want: { status: 401 } },
    { name: 'uid claim missing', token: () => issuer.sign({ ...good, oid: undefined }), want: { status: 401 } },
    { name: 'malformed', token: async () => 'e30.e30', want: 'not mine' },
    { name: 'oversized', token: async () => `${await issuer.sign(good)}.${'x'.repeat(17_000)}`, want: 'not mine' },
  ])('$name', async ({ token, want }) => {
    const set = build(parseAuthenticationConfig(file([entry(), entry({}, () => other)]), 'test', { serviceAccountIssuers: [] }));
    expect(await outcome(set, await token())).toEqual(want);
  });

  it('accepts the upstream apiVersion spelling', () => {
    expect(parseAuthenticationConfig(file([entry()], 'apiserver.config.k8s.io/v1beta1'), 'test', { serviceAccountIssuers: [] })).toHaveLength(1);
  });

  it.each([
    { name: 'more than 64 authenticators', jwt: () => Array.from({ length: 65 }, (_, i) => entry({ issuer: { url: `https://i${i}.example`, audiences: ['a'] } })), error: 'jwt: Too many: 65: must have at most 64 items' },
    { name: 'duplicate issuer URL', jwt: () => [entry(), entry()], error: "jwt[1].issuer.url: Duplicate value: \"https://127.0.0.1:" },
    { name: 'issuer equals the service account issuer', jwt: () => [entry({ issuer: { url: 'https://orch.default.svc', audiences: ['a'] } })], error: 'jwt[0].issuer.url: Invalid value: "https://orch.default.svc": issuer URL must not overlap with the service account issuer' },
    { name: 'http issuer', jwt: () => [entry({ issuer: { url: 'http://x.example', audiences: ['a'] } })], error: 'jwt[0].issuer.url: Invalid value: "http://x.example": URL scheme must be https' },
    { name: 'discoveryURL equal to url', jwt: () => [entry({ issuer: { url: 'https://x.example', discoveryURL: 'https://x.example', audiences: ['a'] } })], error: 'jwt[0].issuer.discoveryURL: Invalid value: "https://x.example": discoveryURL must be different from URL' },
    { name: 'duplicate discoveryURL', jwt: () => [entry({ issuer: { url: 'https://x.example', discoveryURL: 'https://d.example/x', audiences: ['a'] } }), entry({ issuer: { url: 'https://y.example', discoveryURL: 'https://d.example/x', audiences: ['a'] } })], error: 'jwt[1].issuer.discoveryURL: Duplicate value' },
    { name: 'no audiences', jwt: () => [entry({ issuer: { url: 'https://x.example', audiences: [] } })], error: 'jwt[0].issuer.audiences: Required value' },
    { name: 'several audiences without MatchAny', jwt: () => [entry({ issuer: { url: 'https://x.example', audiences: ['a', 'b'] } })], error: 'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences' },
    { name: 'claim validation rule without claim', jwt: () => [entry({ claimValidationRules: [{ requiredValue: 'x' }] })], error: 'jwt[0].claimValidationRules[0].claim: Required value' },
    { name: 'username claim without prefix', jwt: () => [entry({ claimMappings: { username: { claim: 'sub' } } })], error: 'jwt[0].claimMappings.username.prefix: Required value' },
    { name: 'wrong kind', jwt: () => [], kind: 'Nope', error: 'kind: Unsupported value: "Nope"' },
  ])('refuses: $name', ({ jwt, error, kind }) => {
    const text = kind ? JSON.stringify({ apiVersion: 'apiserver.config.orch.io/v1beta1', kind, jwt: jwt() }) : file(jwt());
    expect(() => parseAuthenticationConfig(text, 'cfg.yaml', { serviceAccountIssuers: ['https://orch.default.svc'] })).toThrow(error);
  });

  it('discoveryURL is used as given; the fetched issuer must equal issuer.url', async () => {
    const cfg = parseAuthenticationConfig(file([entry({ issuer: { url: issuer.url, discoveryURL: issuer.discoveryUrl, certificateAuthority: issuer.caPem, audiences: ['orch'] } })]), 't', { serviceAccountIssuers: [] });
    expect(await outcome(build(cfg), await issuer.sign({ ...good, aud: 'orch' }))).toMatchObject({ user: 'idp:bob' });
    const wrong = parseAuthenticationConfig(file([entry({ issuer: { url: 'https://not-what-discovery-says.example', discoveryURL: issuer.discoveryUrl, certificateAuthority: issuer.caPem, audiences: ['orch'] } })]), 't', { serviceAccountIssuers: [] });
    expect(await outcome(build(wrong), await issuer.sign({ ...good, aud: 'orch', iss: 'https://not-what-discovery-says.example' }))).toEqual({ status: 401 });
  });

  it('caches a success for at most 10 s and not past exp; a replaced set forgets it', async () => {
    let t = Date.now();
    const a = new JwtAuthenticator(parseAuthenticationConfig(file([entry()]), 't', { serviceAccountIssuers: [] })[0], { now: () => t });
    let calls = 0;
    const counting = { issuerUrl: a.issuerUrl, authenticate: (r: Parameters<JwtAuthenticator['authenticate']>[0]) => (calls++, a.authenticate(r)) } as unknown as JwtAuthenticator;
    const set = new JwtAuthenticatorSet([counting], { now: () => t });
    const token = await issuer.sign({ ...good, exp: Math.floor(t / 1000) + 5 });
    await set.authenticate(bearer(token));
    await set.authenticate(bearer(token));
    expect(calls).toBe(1);
    t += 5_001; // past exp, before 10 s
    await expect(set.authenticate(bearer(token))).rejects.toMatchObject({ code: 401 });
    expect(calls).toBe(2);
    set.replace([]);
    expect(await set.authenticate(bearer(await issuer.sign(good)))).toBeNull();
  });
});
