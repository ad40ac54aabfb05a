import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify, parse } from 'yaml';
import { ensureBinary, eventually, freePort, removeDir, tempDir } from '@orch/testing';
import { buildLocalImages, ensureDocker, LOCAL_ENGINES, LOCAL_NODE, run, upstreamImagesAvailable, type DockerEngine } from './docker';

const ROOT = join(__dirname, '..', '..');
const PROJECT = 'orch-e2e-compose';
/**
 * docker-compose.yml as committed, really running: the image of deploy/Dockerfile built, every
 * service up and healthy, kubectl through the HAProxy address sees the node and a pod runs on it.
 * Where no registry is reachable the upstream images are replaced by stand-ins built from Debian
 * packages (e2e/compose/docker.ts) through an override file; the compose file itself is unchanged.
 */
describe('docker compose up', () => {
  let docker: DockerEngine | undefined;
  let dir: string;
  let compose: string;
  let files: string[];
  let env: NodeJS.ProcessEnv;
  let apiPort: number;

  const dc = (args: string[], timeoutMs = 300_000) => run(compose, ['-p', PROJECT, '--project-directory', ROOT, ...files.flatMap((f) => ['-f', f]), ...args], { env, cwd: ROOT, timeoutMs });

  beforeAll(async () => {
    compose = await ensureBinary('docker-compose', 'docker-compose');
    docker = await ensureDocker();
    dir = await tempDir('orch-compose-');
    apiPort = await freePort();
    env = { ...docker.env, ORCH_PORT: String(apiPort) };
    const services = (parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { image?: string; build?: unknown }> }).services;
    const override: Record<string, Record<string, unknown>> = {};
    const upstream = upstreamImagesAvailable(env);
    if (!upstream) await buildLocalImages(env);
    for (const [name, svc] of Object.entries(services)) {
      if (svc.build) override[name] = { build: { context: '.', dockerfile: 'deploy/Dockerfile', network: 'host', ...(upstream ? {} : { args: { NODE_IMAGE: LOCAL_NODE } }) } };
      else if (!upstream) override[name] = name === 'haproxy' ? { image: LOCAL_ENGINES, command: ['haproxy', '-W', '-db', '-f', '/usr/local/etc/haproxy/haproxy.cfg'] } : { image: LOCAL_ENGINES };
    }
    const overrideFile = join(dir, 'docker-compose.override.yml');
    writeFileSync(overrideFile, stringify({ services: override }));
    files = [join(ROOT, 'docker-compose.yml'), overrideFile];
    console.log(`compose: ${upstream ? 'upstream images' : `local stand-ins (${LOCAL_NODE}, ${LOCAL_ENGINES})`}, API on 127.0.0.1:${apiPort}`);
    dc(['build'], 1_800_000);
    dc(['up', '-d'], 600_000);
  }, 2_400_000);

  afterAll(async () => {
    try {
      if (files) dc(['down', '-v', '--remove-orphans'], 300_000);
    } finally {
      await docker?.stop();
      if (dir) await removeDir(dir);
    }
  }, 400_000);

  it('serves the API through the load balancer: the node is Ready and a pod runs to completion', async () => {
    // Every service with a health check becomes healthy.
    const ids = dc(['ps', '-q']).split('\n').filter(Boolean);
    const health = () => ids.map((id) => run('docker', ['inspect', '--format', '{{.Name}} {{if eq .State.Status "exited"}}exited {{.State.ExitCode}}{{else if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}', id], { env }).trim());
    await eventually(
      'every service to be healthy',
      () => {
        const states = health();
        if (states.some((h) => !/ (healthy|exited 0)$/.test(h))) throw new Error(states.join(', '));
        return true;
      },
      300_000,
      2000,
    );

    // The admin kubeconfig from the state volume, pointed at the published load balancer port.
    const init = dc(['ps', '-a', '-q', 'init']).trim();
    const kubeconfig = join(dir, 'admin.kubeconfig');
    run('docker', ['cp', `${init}:/var/lib/orch/admin.kubeconfig`, kubeconfig], { env });
    writeFileSync(kubeconfig, readFileSync(kubeconfig, 'utf8').replace('https://haproxy:6443', `https://127.0.0.1:${apiPort}`));
    const kubectl = (...args: string[]) => spawnSync('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { encoding: 'utf8', timeout: 30_000 });

    await eventually(
      'node-1 to be Ready',
      () => {
        const r = kubectl('get', 'nodes');
        if (!/node-1\s+Ready/.test(r.stdout)) throw new Error(r.stdout + r.stderr);
        return true;
      },
      180_000,
      2000,
    );
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'smoke', namespace: 'default' }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'node', command: ['node', '-e', 'console.log("smoke " + (6 * 7))'] }] } };
    const applied = spawnSync('kubectl', [`--kubeconfig=${kubeconfig}`, 'apply', '-f', '-'], { input: JSON.stringify(pod), encoding: 'utf8', timeout: 30_000 });
    expect(applied.stderr).toBe('');
    await eventually(
      'the pod to succeed',
      () => {
        if (kubectl('get', 'pod', 'smoke', '-o', 'jsonpath={.status.phase}').stdout !== 'Succeeded') throw new Error(kubectl('get', 'pod', 'smoke', '-o', 'yaml').stdout);
        return true;
      },
      120_000,
      2000,
    );
    expect(kubectl('logs', 'smoke').stdout).toBe('smoke 42\n');
  }, 900_000);
});
