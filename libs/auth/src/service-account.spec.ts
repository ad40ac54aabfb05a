import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { StatusError } from '@orch/apimachinery';
import { LEGACY_ISSUER, LEGACY_TOKEN_LAST_USED, ServiceAccountTokenIssuer, publicKeysFromPem, serviceAccountAuthenticator, serviceAccountKeyId, type ServiceAccountLookup } from './service-account';

const ISSUER = 'https://orch.default.svc';
const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);

const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const pem = (k: { export(o: object): string | Buffer }, type: 'pkcs8' | 'spki') => k.export({ type, format: 'pem' }).toString();

interface World {
  accounts: Map<string, string>;
  secrets: Map<string, { uid: string; token?: string; annotations?: Record<string, string> }>;
  pods: Map<string, string>;
  stamped: string[];
}

function world(): World {
  return {
    accounts: new Map([['team/builder', 'sa-uid-1']]),
    secrets: new Map([['team/builder-token', { uid: 'secret-uid-1' }]]),
    pods: new Map([['team/runner', 'pod-uid-1']]),
    stamped: [],
  };
}

function lookupOf(w: World): ServiceAccountLookup {
  return {
    serviceAccount: async (ns, name) => (w.accounts.has(`${ns}/${name}`) ? { metadata: { uid: w.accounts.get(`${ns}/${name}`) } } : undefined),
    secret: async (ns, name) => {
      const s = w.secrets.get(`${ns}/${name}`);
      const data: Record<string, string> = s?.token ? { token: Buffer.from(s.token).toString('base64') } : {};
      return s ? { metadata: { uid: s.uid, annotations: s.annotations }, data } : undefined;
    },
    pod: async (ns, name) => (w.pods.has(`${ns}/${name}`) ? { metadata: { uid: w.pods.get(`${ns}/${name}`) } } : undefined),
    markLegacyTokenUsed: async (ns, name, date) => void w.stamped.push(`${ns}/${name}@${date}`),
  };
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** A bound token as TokenRequest issues it, with optional overrides of claims and key. */
async function bound(o: { key?: string; iat?: number; exp?: number; nbf?: number; aud?: string[]; iss?: string; pod?: { name: string; uid: string }; account?: string; uid?: string } = {}): Promise<string> {
  const iat = o.iat ?? Math.floor(NOW / 1000) - 60;
  const claim: Record<string, unknown> = { namespace: 'team', serviceaccount: { name: o.account ?? 'builder', uid: o.uid ?? 'sa-uid-1' } };
  if (o.pod) claim.pod = o.pod;
  const key = o.key ?? pem(ec.privateKey, 'pkcs8');
  const { createPrivateKey } = await import('node:crypto');
  const k = createPrivateKey(key);
  return new SignJWT({ 'orch.io': claim })
    .setProtectedHeader({ alg: k.asymmetricKeyType === 'rsa' ? 'RS256' : 'ES256' })
    .setIssuer(o.iss ?? ISSUER)
    .setSubject(`system:serviceaccount:team:${o.account ?? 'builder'}`)
    .setAudience(o.aud ?? [ISSUER])
    .setIssuedAt(iat)
    .setNotBefore(o.nbf ?? iat)
    .setExpirationTime(o.exp ?? iat + 3600)
    .sign(k);
}

async function legacy(secretName = 'builder-token', key = pem(ec.privateKey, 'pkcs8')): Promise<string> {
  const { createPrivateKey } = await import('node:crypto');
  return new SignJWT({
    'orch.io/serviceaccount/namespace': 'team',
    'orch.io/serviceaccount/secret.name': secretName,
    'orch.io/serviceaccount/service-account.name': 'builder',
    'orch.io/serviceaccount/service-account.uid': 'sa-uid-1',
  })
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(LEGACY_ISSUER)
    .setSubject('system:serviceaccount:team:builder')
    .sign(createPrivateKey(key));
}

function authenticator(w: World) {
  const keys = [...publicKeysFromPem(pem(ec.publicKey, 'spki')), ...publicKeysFromPem(pem(rsa.privateKey, 'pkcs8'))];
  return serviceAccountAuthenticator({ keys, issuers: [ISSUER], audiences: [ISSUER], lookup: lookupOf(w), now: () => NOW });
}

async function outcome(w: World, token: string, audiences?: string[]): Promise<string> {
  try {
    const user = await authenticator(w).authenticate({ ...bearer(token), ...(audiences ? { audiences } : {}) });
    return user ? user.username : 'not claimed';
  } catch (err) {
    return err instanceof StatusError ? String(err.code) : `error: ${(err as Error).message}`;
  }
}

describe('service-account tokens', () => {
  const nowS = Math.floor(NOW / 1000);
  it.each([
    { name: 'valid bound token (ES256)', token: () => bound(), want: 'system:serviceaccount:team:builder' },
    { name: 'valid bound token (RS256 key)', token: () => bound({ key: pem(rsa.privateKey, 'pkcs8') }), want: 'system:serviceaccount:team:builder' },
    { name: 'bound to an existing pod', token: () => bound({ pod: { name: 'runner', uid: 'pod-uid-1' } }), want: 'system:serviceaccount:team:builder' },
    { name: 'valid legacy token', token: () => legacy(), want: 'system:serviceaccount:team:builder', setup: (w: World, t: string) => (w.secrets.get('team/builder-token')!.token = t) },
    { name: 'expired', token: () => bound({ iat: nowS - 7200, exp: nowS - 3600 }), want: '401' },
    { name: 'not yet valid', token: () => bound({ iat: nowS + 600, nbf: nowS + 600, exp: nowS + 4200 }), want: '401' },
    { name: 'wrong signature (another key)', token: () => bound({ key: pem(other.privateKey, 'pkcs8') }), want: '401' },
    { name: 'wrong audience', token: () => bound({ aud: ['https://elsewhere'] }), want: '401' },
    { name: 'another issuer (not claimed: another authenticator may own it)', token: () => bound({ iss: 'https://idp.example' }), want: 'not claimed' },
    { name: 'revoked: account deleted', token: () => bound(), want: '401', setup: (w: World) => w.accounts.delete('team/builder') },
    { name: 'revoked: account recreated (new uid)', token: () => bound(), want: '401', setup: (w: World) => w.accounts.set('team/builder', 'sa-uid-2') },
    { name: 'revoked: bound pod deleted', token: () => bound({ pod: { name: 'runner', uid: 'pod-uid-1' } }), want: '401', setup: (w: World) => w.pods.delete('team/runner') },
    { name: 'revoked: legacy secret deleted', token: () => legacy(), want: '401' },
    { name: 'revoked: legacy secret holds another token', token: () => legacy(), want: '401', setup: (w: World) => (w.secrets.get('team/builder-token')!.token = 'something-else') },
    { name: 'malformed (not a JWT)', token: async () => 'a.b.c', want: 'not claimed' },
    { name: 'malformed (garbage)', token: async () => 'not a token at all', want: 'not claimed' },
    { name: 'oversized', token: async () => `${(await bound()).split('.')[0]}.${'A'.repeat(20_000)}.x`, want: '401' },
  ])('$name → $want', async ({ token, want, setup }) => {
    const w = world();
    const t = await token();
    setup?.(w, t);
    expect(await outcome(w, t)).toBe(want);
  });

  it('a TokenReview audience replaces the API audiences', async () => {
    const w = world();
    const t = await bound({ aud: ['vault'] });
    expect(await outcome(w, t)).toBe('401');
    expect(await outcome(w, t, ['vault'])).toBe('system:serviceaccount:team:builder');
  });

  it('a legacy token stamps its secret once a day', async () => {
    const w = world();
    const t = await legacy();
    w.secrets.get('team/builder-token')!.token = t;
    await authenticator(w).authenticate(bearer(t));
    expect(w.stamped).toEqual(['team/builder-token@2026-01-10']);
    w.secrets.get('team/builder-token')!.annotations = { [LEGACY_TOKEN_LAST_USED]: '2026-01-10' };
    await authenticator(w).authenticate(bearer(t));
    expect(w.stamped).toHaveLength(1);
  });

  it('concurrent first uses of a legacy token stamp its secret once (before the stamp is seen)', async () => {
    const w = world();
    const t = await legacy();
    w.secrets.get('team/builder-token')!.token = t;
    const a = authenticator(w);
    await Promise.all(Array.from({ length: 20 }, () => a.authenticate(bearer(t))));
    await a.authenticate(bearer(t));
    expect(w.stamped).toEqual(['team/builder-token@2026-01-10']);
  });

  it('ServiceAccountTokenIssuer output is accepted, with pod and node in extra', async () => {
    const issuer = new ServiceAccountTokenIssuer(pem(ec.privateKey, 'pkcs8'), ISSUER, () => NOW);
    const { token, expiresAt } = await issuer.issue({ namespace: 'team', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid-1', audiences: [ISSUER], expirationSeconds: 600, boundObject: { kind: 'Pod', name: 'runner', uid: 'pod-uid-1' }, nodeName: 'n1' });
    expect(expiresAt.getTime()).toBe(NOW + 600_000);
    const user = await authenticator(world()).authenticate(bearer(token));
    expect(user).toMatchObject({ username: 'system:serviceaccount:team:builder', uid: 'sa-uid-1', groups: ['system:serviceaccounts', 'system:serviceaccounts:team'] });
    expect(user?.extra).toMatchObject({ 'authentication.orch.io/pod-name': ['runner'], 'authentication.orch.io/node-name': ['n1'] });
  });

  describe('one authenticator reused (its verified tokens cached)', () => {
    it.each([
      { name: 'account deleted', token: () => bound(), revoke: (w: World) => w.accounts.delete('team/builder') },
      { name: 'account recreated (new uid)', token: () => bound(), revoke: (w: World) => w.accounts.set('team/builder', 'sa-uid-2') },
      { name: 'bound pod deleted', token: () => bound({ pod: { name: 'runner', uid: 'pod-uid-1' } }), revoke: (w: World) => w.pods.delete('team/runner') },
      { name: 'bound pod recreated (new uid)', token: () => bound({ pod: { name: 'runner', uid: 'pod-uid-1' } }), revoke: (w: World) => w.pods.set('team/runner', 'pod-uid-2') },
      { name: 'legacy secret deleted', token: () => legacy(), revoke: (w: World) => w.secrets.delete('team/builder-token') },
      { name: 'legacy secret holds another token', token: () => legacy(), revoke: (w: World) => (w.secrets.get('team/builder-token')!.token = 'something-else') },
    ])('accepted, then $name → refused at the next request', async ({ token, revoke }) => {
      const w = world();
      const t = await token();
      if (w.secrets.has('team/builder-token')) w.secrets.get('team/builder-token')!.token = t;
      const a = authenticator(w);
      expect((await a.authenticate(bearer(t)))?.username).toBe('system:serviceaccount:team:builder');
      revoke(w);
      await expect(a.authenticate(bearer(t))).rejects.toMatchObject({ code: 401 });
    });

    it('a token accepted before its exp is refused once exp (plus the 60 s skew) has passed', async () => {
      let now = NOW;
      const keys = publicKeysFromPem(pem(ec.publicKey, 'spki'));
      const a = serviceAccountAuthenticator({ keys, issuers: [ISSUER], audiences: [ISSUER], lookup: lookupOf(world()), now: () => now });
      // Within the skew for 5 s more: less than the cache's 10 s.
      const t = await bound({ iat: Math.floor(NOW / 1000) - 3600, exp: Math.floor(NOW / 1000) - 55 });
      expect((await a.authenticate(bearer(t)))?.username).toBe('system:serviceaccount:team:builder');
      now += 4_000;
      expect((await a.authenticate(bearer(t)))?.username).toBe('system:serviceaccount:team:builder');
      now += 2_000;
      await expect(a.authenticate(bearer(t))).rejects.toMatchObject({ code: 401 });
    });

    it('a token accepted for one audience is not accepted for another', async () => {
      const a = authenticator(world());
      const t = await bound({ aud: ['vault'] });
      expect((await a.authenticate({ ...bearer(t), audiences: ['vault'] }))?.username).toBe('system:serviceaccount:team:builder');
      await expect(a.authenticate(bearer(t))).rejects.toMatchObject({ code: 401 });
    });
  });

  it('key ids match between signer and verifier', () => {
    expect(serviceAccountKeyId(publicKeysFromPem(pem(ec.privateKey, 'pkcs8'))[0])).toBe(serviceAccountKeyId(publicKeysFromPem(pem(ec.publicKey, 'spki'))[0]));
  });
});
