import type { Secret } from '../../framework/api';
import { BOOTSTRAP_TOKEN_TYPE, signingToken, tokenExpiration } from './bootstrap-token';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const b64 = (s: string) => Buffer.from(s).toString('base64');

function token(p: { name?: string; type?: string; data?: Record<string, string | undefined> } = {}): Secret {
  const data: Record<string, string | undefined> = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-signing': 'true', ...(p.data ?? {}) };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: p.type ?? BOOTSTRAP_TOKEN_TYPE,
    metadata: { name: p.name ?? 'bootstrap-token-abcdef', namespace: 'orch-system' },
    data: Object.fromEntries(Object.entries(data).flatMap(([k, v]) => (v === undefined ? [] : [[k, b64(v)]]))),
  };
}

describe('tokenExpiration', () => {
  it.each([
    { name: 'no expiration never expires', input: undefined, want: { expired: false } },
    { name: 'future expiration has a ttl', input: '2026-06-01T00:01:00Z', want: { expired: false, ttlMs: 60_000 } },
    { name: 'past expiration is expired', input: '2026-05-31T23:59:59Z', want: { expired: true } },
    { name: 'exactly now is expired', input: '2026-06-01T00:00:00Z', want: { expired: true } },
    { name: 'unparseable counts as expired', input: 'tomorrow', want: { expired: true } },
  ])('$name', ({ input, want }) => {
    expect(tokenExpiration(token({ data: { expiration: input } }), NOW)).toEqual(want);
  });
});

describe('signingToken', () => {
  it.each([
    { name: 'valid signing token', input: token(), want: { id: 'abcdef', secret: '0123456789abcdef' } },
    { name: 'wrong type', input: token({ type: 'Opaque' }), want: undefined },
    { name: 'name does not match id', input: token({ name: 'bootstrap-token-zzzzzz' }), want: undefined },
    { name: 'name without prefix', input: token({ name: 'abcdef' }), want: undefined },
    { name: 'malformed secret', input: token({ data: { 'token-secret': 'short' } }), want: undefined },
    { name: 'not for signing', input: token({ data: { 'usage-bootstrap-signing': 'false' } }), want: undefined },
    { name: 'signing usage missing', input: token({ data: { 'usage-bootstrap-signing': undefined } }), want: undefined },
    { name: 'expired', input: token({ data: { expiration: '2026-01-01T00:00:00Z' } }), want: undefined },
    { name: 'not yet expired', input: token({ data: { expiration: '2027-01-01T00:00:00Z' } }), want: { id: 'abcdef', secret: '0123456789abcdef' } },
  ])('$name', ({ input, want }) => {
    expect(signingToken(input, NOW)).toEqual(want);
  });
});
