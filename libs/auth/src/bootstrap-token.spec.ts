import { StatusError } from '@orch/apimachinery';
import { bootstrapTokenAuthenticator, type BootstrapTokenSecret } from './bootstrap-token';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const NOW = new Date('2025-01-01T00:00:00Z');

function secret(overrides: Record<string, string | undefined> = {}, type = 'bootstrap.orch.io/token', deleting = false): BootstrapTokenSecret {
  const fields: Record<string, string | undefined> = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', ...overrides };
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) data[k] = b64(v);
  return { type, metadata: { name: 'bootstrap-token-abcdef', ...(deleting ? { deletionTimestamp: '2024-12-31T00:00:00Z' } : {}) }, data };
}

type Want = { user: string; groups: string[] } | 'unclaimed' | 401;

describe('bootstrapTokenAuthenticator', () => {
  it.each<{ name: string; header?: string; secret?: BootstrapTokenSecret; want: Want }>([
    // claimed and accepted
    { name: 'valid token', header: 'Bearer abcdef.0123456789abcdef', secret: secret(), want: { user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] } },
    {
      name: 'extra groups',
      header: 'Bearer abcdef.0123456789abcdef',
      secret: secret({ 'auth-extra-groups': 'system:bootstrappers:orch:default-node-token, system:bootstrappers:worker' }),
      want: { user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:orch:default-node-token', 'system:bootstrappers:worker'] },
    },
    { name: 'not yet expired', header: 'Bearer abcdef.0123456789abcdef', secret: secret({ expiration: '2025-01-02T00:00:00Z' }), want: { user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] } },
    // not claimed: no bearer token of the bootstrap shape
    { name: 'no header', want: 'unclaimed' },
    { name: 'other token shape', header: 'Bearer some-service-account-jwt', want: 'unclaimed' },
    { name: 'upper case id', header: 'Bearer ABCDEF.0123456789abcdef', want: 'unclaimed' },
    { name: 'basic auth', header: 'Basic YWJjOmRlZg==', want: 'unclaimed' },
    // claimed and rejected
    { name: 'no secret', header: 'Bearer abcdef.0123456789abcdef', want: 401 },
    { name: 'wrong secret', header: 'Bearer abcdef.fedcba9876543210', secret: secret(), want: 401 },
    { name: 'wrong type', header: 'Bearer abcdef.0123456789abcdef', secret: secret({}, 'Opaque'), want: 401 },
    { name: 'being deleted', header: 'Bearer abcdef.0123456789abcdef', secret: secret({}, undefined, true), want: 401 },
    { name: 'expired', header: 'Bearer abcdef.0123456789abcdef', secret: secret({ expiration: '2024-12-31T23:59:59Z' }), want: 401 },
    { name: 'unparsable expiration', header: 'Bearer abcdef.0123456789abcdef', secret: secret({ expiration: 'tomorrow' }), want: 401 },
    { name: 'authentication usage off', header: 'Bearer abcdef.0123456789abcdef', secret: secret({ 'usage-bootstrap-authentication': 'false' }), want: 401 },
    { name: 'token-id differs', header: 'Bearer abcdef.0123456789abcdef', secret: secret({ 'token-id': 'zzzzzz' }), want: 401 },
    { name: 'bad extra group', header: 'Bearer abcdef.0123456789abcdef', secret: secret({ 'auth-extra-groups': 'system:masters' }), want: 401 },
  ])('$name', async ({ header, secret: s, want }) => {
    const looked: string[] = [];
    const a = bootstrapTokenAuthenticator(
      async (id) => {
        looked.push(id);
        return s;
      },
      { now: () => NOW },
    );
    let got: Want;
    try {
      const user = await a.authenticate({ headers: header ? { authorization: header } : {} });
      got = user ? { user: user.username, groups: user.groups } : 'unclaimed';
    } catch (e) {
      if (!(e instanceof StatusError)) throw e;
      got = e.code as 401;
    }
    expect(got).toEqual(want);
    if (want !== 'unclaimed') expect(looked).toEqual(['abcdef']);
  });
});
