import { execFile, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { selfSignedServingCert, writeKubeconfig } from '@orch/auth';
import { removeDir, startOidcIssuer, tempDir, type OidcIssuer } from '@orch/testing';
import { GATEWAY_MAIN, startGateway, type GatewayProcess } from './support/gateway';
import { eventually } from './support/node-agent';

// OpenID Connect and the AuthenticationConfiguration file against real HTTPS issuers
// (discovery + JWKS on loopback ports, jose keys, their own CA), through gateway processes
// and stock kubectl: `--oidc-*` flags, a file edited on disk and picked up without restart,
// and the start-up refusal of both together.

let dir: string;
let idp: OidcIssuer;
let idp2: OidcIssuer;

beforeAll(async () => {
  dir = await tempDir('oidc-e2e-');
  const tls = await selfSignedServingCert(['127.0.0.1'], 'test-idp');
  idp = await startOidcIssuer(tls);
  idp2 = await startOidcIssuer(tls);
  await writeFile(join(dir, 'idp-ca.crt'), tls.caPem);
});
afterAll(async () => {
  await idp?.stop();
  await idp2?.stop();
  if (dir) await removeDir(dir);
});

/** `kubectl auth whoami -o json` with `token` as the only credential: the user, or the error text. */
async function whoami(gw: GatewayProcess, token: string): Promise<{ username?: string; groups?: string[]; err?: string }> {
  const kubeconfig = join(dir, `token-${gw.port}.kubeconfig`);
  await writeKubeconfig(kubeconfig, { server: gw.url, caPem: gw.creds.ca, token, user: 'oidc', context: 'oidc' });
  // Asynchronous, so the gateway's output keeps being read while kubectl runs.
  const r = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
    execFile('kubectl', ['--kubeconfig', kubeconfig, 'auth', 'whoami', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => resolve({ status: err ? 1 : 0, stdout, stderr })),
  );
  if (r.status !== 0) return { err: r.stderr.trim() };
  const review = JSON.parse(r.stdout) as { status: { userInfo: { username: string; groups: string[] } } };
  return review.status.userInfo;
}

describe('--oidc-* flags', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      args: [`--oidc-issuer-url=${idp.url}`, '--oidc-client-id=orch-cli', '--oidc-groups-claim=groups', '--oidc-groups-prefix=idp:', '--oidc-required-claim=hd=example.com', `--oidc-ca-file=${join(dir, 'idp-ca.crt')}`],
    });
  }, 60_000);
  afterAll(() => gw?.stop());

  it('an id_token of the issuer is a user (prefixed with <issuer>#), with its groups and system:authenticated', async () => {
    const token = await idp.sign({ sub: 'alice', aud: 'orch-cli', hd: 'example.com', groups: ['devs'] });
    expect(await whoami(gw, token)).toEqual({ username: `${idp.url}#alice`, groups: ['idp:devs', 'system:authenticated'] });
  });

  it.each([
    { name: 'expired', claims: { exp: Math.floor(Date.now() / 1000) - 60 } },
    { name: 'for another client', claims: { aud: 'someone-else' } },
    { name: 'without the required claim', claims: { hd: 'evil.com' } },
  ])('$name: 401 (kubectl says Unauthorized), never anonymous', async ({ claims }) => {
    const token = await idp.sign({ sub: 'alice', aud: 'orch-cli', hd: 'example.com', ...claims });
    expect((await whoami(gw, token)).err).toMatch(/Unauthorized/);
    expect((await gw.anonymous.request('GET', '/api/v1/namespaces', undefined, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });
});

describe('--authentication-config', () => {
  let gw: GatewayProcess;
  const file = () => join(dir, 'authn.yaml');
  const config = (entries: { iss: OidcIssuer; prefix: string }[]) =>
    [
      'apiVersion: apiserver.config.k8s.io/v1beta1',
      'kind: AuthenticationConfiguration',
      'jwt:',
      ...entries.flatMap((e) => [
        '- issuer:',
        `    url: ${e.iss.url}`,
        '    audiences: [orch]',
        '    certificateAuthority: |',
        ...e.iss.caPem.trim().split('\n').map((l) => `      ${l}`),
        '  claimMappings:',
        `    username: {claim: sub, prefix: "${e.prefix}"}`,
      ]),
    ].join('\n');

  beforeAll(async () => {
    await writeFile(file(), config([{ iss: idp, prefix: 'one:' }]));
    gw = await startGateway({ args: [`--authentication-config=${file()}`] });
  }, 60_000);
  afterAll(() => gw?.stop());

  it('authenticates the configured issuer; an edit on disk (new issuer, new prefix) applies without a restart; an invalid edit is ignored', async () => {
    const t1 = await idp.sign({ sub: 'bob', aud: 'orch' });
    const t2 = await idp2.sign({ sub: 'carol', aud: 'orch' });
    expect((await whoami(gw, t1)).username).toBe('one:bob');
    expect((await whoami(gw, t2)).err).toMatch(/Unauthorized/);

    await writeFile(file(), config([{ iss: idp, prefix: 'uno:' }, { iss: idp2, prefix: 'two:' }]));
    // Liveness bounds: the reload is logged within a poll (1 s); the new issuer's keys are
    // fetched then, and a fetch that failed on a loaded machine is retried after 10 s.
    await eventually('the gateway to reload the edited file', async () => (gw.process.output().includes('--authentication-config: reloaded') ? true : undefined), 30_000);
    await eventually('the edited file to apply', async () => ((await whoami(gw, t2)).username === 'two:carol' ? true : undefined), 30_000);
    expect((await whoami(gw, t1)).username).toBe('uno:bob');

    // A file that does not validate (two audiences without MatchAny) keeps the last good configuration.
    await writeFile(file(), config([{ iss: idp, prefix: 'x:' }]).replace('audiences: [orch]', 'audiences: [orch, other]'));
    await eventually('the gateway to report the invalid file', async () => (gw.process.output().includes('the changed file is invalid') ? true : undefined), 30_000);
    expect(gw.process.output()).toContain('audienceMatchPolicy must be MatchAny for multiple audiences');
    expect((await whoami(gw, t2)).username).toBe('two:carol');
    expect((await whoami(gw, t1)).username).toBe('uno:bob');
  }, 120_000);

  it('is refused together with --oidc-* flags', () => {
    const run = (args: string[]) => spawnSync(process.execPath, [GATEWAY_MAIN, '--secure-port=0', `--data-dir=${join(dir, 'refused')}`, ...args], { encoding: 'utf8', timeout: 30_000 });
    const both = run([`--authentication-config=${file()}`, `--oidc-issuer-url=${idp.url}`, '--oidc-client-id=x']);
    expect(both.status).not.toBe(0);
    expect(both.stderr + both.stdout).toContain('--authentication-config and --oidc-issuer-url, --oidc-client-id cannot be used together');
  });
});
