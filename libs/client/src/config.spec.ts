import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotInClusterError, inClusterConfig } from './config';
import { RestClient } from './rest';
import { ApiPeer } from '@orch/testing';

describe('inClusterConfig', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'orch-sa-'));
    writeFileSync(join(dir, 'token'), 'sa-token\n');
    writeFileSync(join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
    writeFileSync(join(dir, 'namespace'), 'team-a\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    { name: 'IPv4 host', env: { ORCH_SERVICE_HOST: '10.0.0.1', ORCH_SERVICE_PORT: '443' }, want: 'https://10.0.0.1:443' },
    { name: 'IPv6 host is bracketed', env: { ORCH_SERVICE_HOST: 'fd00::1', ORCH_SERVICE_PORT: '6443' }, want: 'https://[fd00::1]:6443' },
    { name: 'DNS host', env: { ORCH_SERVICE_HOST: 'orch.default.svc', ORCH_SERVICE_PORT: '6443' }, want: 'https://orch.default.svc:6443' },
  ])('builds the server URL for $name', ({ env, want }) => {
    const cfg = inClusterConfig({ dir, env });
    expect(cfg).toEqual({ server: want, caPem: expect.stringContaining('BEGIN CERTIFICATE'), tokenFile: join(dir, 'token'), namespace: 'team-a' });
  });

  it.each([
    { name: 'no host', env: { ORCH_SERVICE_PORT: '443' } },
    { name: 'no port', env: { ORCH_SERVICE_HOST: '10.0.0.1' } },
    { name: 'empty env', env: {} },
  ])('throws NotInClusterError with $name', ({ env }) => {
    expect(() => inClusterConfig({ dir, env })).toThrow(NotInClusterError);
  });

  it('fails when the token is missing, tolerates a missing namespace file', () => {
    const env = { ORCH_SERVICE_HOST: 'h', ORCH_SERVICE_PORT: '1' };
    rmSync(join(dir, 'namespace'));
    expect(inClusterConfig({ dir, env }).namespace).toBeUndefined();
    rmSync(join(dir, 'token'));
    expect(() => inClusterConfig({ dir, env })).toThrow(/ENOENT/);
  });

  it('sends the token file contents as the bearer token', async () => {
    const peer = await ApiPeer.start();
    const client = new RestClient({ server: peer.url, tokenFile: join(dir, 'token') }, { component: 'test' });
    try {
      await client.resource({ group: '', version: 'v1', resource: 'nodes' }).list();
      expect(peer.requests[0].headers.authorization).toBe('Bearer sa-token');
    } finally {
      client.close();
      await peer.stop();
    }
  });
});
