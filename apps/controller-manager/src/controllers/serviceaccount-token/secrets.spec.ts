import type { Secret, ServiceAccount } from '../../framework/api';
import { SERVICE_ACCOUNT_NAME_ANNOTATION, SERVICE_ACCOUNT_TOKEN_TYPE, SERVICE_ACCOUNT_UID_ANNOTATION, completeTokenSecret, isTokenSecretOf, secretAccount, tokenSecretNeeds } from './secrets';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const CA = 'CA PEM\n';

const secret = (p: { type?: string; annotations?: Record<string, string>; data?: Record<string, string> } = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: p.type ?? SERVICE_ACCOUNT_TOKEN_TYPE,
  metadata: { name: 's', namespace: 'ns', annotations: p.annotations ?? { [SERVICE_ACCOUNT_NAME_ANNOTATION]: 'sa' } },
  data: p.data,
});
const sa: ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', namespace: 'ns', uid: 'u1' } };

describe('secretAccount / isTokenSecretOf', () => {
  it.each([
    { name: 'token secret by name', input: secret(), account: { name: 'sa', uid: '' }, of: true },
    { name: 'recorded uid must match', input: secret({ annotations: { [SERVICE_ACCOUNT_NAME_ANNOTATION]: 'sa', [SERVICE_ACCOUNT_UID_ANNOTATION]: 'other' } }), account: { name: 'sa', uid: 'other' }, of: false },
    { name: 'other type is not one', input: secret({ type: 'Opaque' }), account: undefined, of: false },
    { name: 'no name annotation is not one', input: secret({ annotations: {} }), account: undefined, of: false },
  ])('$name', ({ input, account, of }) => {
    expect(secretAccount(input)).toEqual(account);
    expect(isTokenSecretOf(input, sa)).toBe(of);
  });
});

describe('tokenSecretNeeds', () => {
  it.each<{ name: string; data: Record<string, string> | undefined; ca: string; want: object }>([
    { name: 'empty secret needs everything', data: undefined, ca: CA, want: { ca: true, namespace: true, token: true } },
    { name: 'complete secret needs nothing', data: { 'ca.crt': b64(CA), namespace: b64('ns'), token: b64('t') }, ca: CA, want: { ca: false, namespace: false, token: false } },
    { name: 'rotated CA is rewritten', data: { 'ca.crt': b64('OLD'), namespace: b64('ns'), token: b64('t') }, ca: CA, want: { ca: true, namespace: false, token: false } },
    { name: 'no CA configured leaves ca.crt alone', data: { namespace: b64('ns'), token: b64('t') }, ca: '', want: { ca: false, namespace: false, token: false } },
  ])('$name', ({ data, ca, want }) => {
    expect(tokenSecretNeeds(secret({ data }), ca)).toEqual(want);
  });
});

describe('completeTokenSecret', () => {
  it('fills what is needed and sets both annotations', () => {
    const input = secret({ data: { token: b64('keep') } });
    const out = completeTokenSecret(input, sa, CA, tokenSecretNeeds(input, CA), 'new-token');
    expect(out.data).toEqual({ token: b64('keep'), 'ca.crt': b64(CA), namespace: b64('ns') });
    expect(out.metadata.annotations).toEqual({ [SERVICE_ACCOUNT_NAME_ANNOTATION]: 'sa', [SERVICE_ACCOUNT_UID_ANNOTATION]: 'u1' });
    expect(input.data).toEqual({ token: b64('keep') });
  });
});
