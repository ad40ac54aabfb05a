import { formatTime } from '@orch/apimachinery';
import type { Secret } from '../../framework/api';
import { eventually, startHarness, storedObject, type Harness } from '../../framework/testing/harness';
import { TokenCleaner, tokenCleanerController } from './tokencleaner';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const token = (id: string, expiration?: string, namespace = 'orch-system'): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'bootstrap.orch.io/token',
  metadata: { name: `bootstrap-token-${id}`, namespace },
  data: { 'token-id': b64(id), 'token-secret': b64('0123456789abcdef'), ...(expiration ? { expiration: b64(expiration) } : {}) },
});
const exists = (h: Harness, id: string, ns = 'orch-system') => storedObject(h.peer, '/v1/secrets', `bootstrap-token-${id}`, ns) !== undefined;

describe('TokenCleaner against an API peer', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(() => h.stop());

  it('is off by default', () => {
    expect(tokenCleanerController.disabledByDefault).toBe(true);
  });

  it('deletes expired tokens now and expiring ones when they expire', async () => {
    h.peer.put('/v1/secrets', token('expird', '2020-01-01T00:00:00Z'));
    h.peer.put('/v1/secrets', token('soon00', formatTime(Date.now() + 1200)));
    h.peer.put('/v1/secrets', token('never0'));
    h.peer.put('/v1/secrets', token('other0', '2020-01-01T00:00:00Z', 'default'));
    h.start(new TokenCleaner(h.ctx));
    await eventually('expired token deleted', () => (exists(h, 'expird') ? undefined : true));
    expect(exists(h, 'soon00')).toBe(true);
    await eventually('expiring token deleted', () => (exists(h, 'soon00') ? undefined : true), 4000);
    expect(exists(h, 'never0')).toBe(true);
    expect(exists(h, 'other0', 'default')).toBe(true);
  });
});
