import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { decodeJwt } from 'jose';
import { ensurePki, issueClientCert, unionAuthenticator, type Authenticator, type CertAndKey, type UserInfo } from '@orch/auth';
import { startBenchGateway, type BenchGateway } from './gateway-process';
import type { AttackJob, AttackResult } from './auth-attacker';
import { call, cpuSeconds, percentile, runLoad, target, type HttpsTarget } from './load';
import { monotonicMicros, profileSummary, type ProfileWindow } from './profile';
import type { Row } from './report';

const RBAC = 'rbac.authorization.orch.io';
const BENCH_TOKEN = 'bench-static-token-0123456789abcdef';

/** One GET of the bench config map through `t` (with an optional bearer token). */
function get(t: HttpsTarget, path: string, token?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.request(`${t.base}${path}`, { method: 'GET', agent: t.agent, headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

async function mustCall(t: HttpsTarget, method: string, path: string, body: unknown): Promise<{ status: number; body: string }> {
  const r = await call(t, method, path, JSON.stringify(body));
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
  return r;
}

/**
 * `npm run bench -- --only=auth`: per-request cost of authentication and authorization as
 * gets/s of one config map, against AlwaysAllow with the same x509 user (not an admin) in the same run:
 * RBAC (with `bindings` RoleBindings to other users and `roles` Roles in place) for an x509
 * user, a static token user and a service-account token, each allowed by one binding; and
 * the serving gateway's CPU per get of each (from /proc); then the bad-credential attacks and
 * their control (contentionControl). With `profile` (`--auth-profile`), both gateways run under --cpu-prof and the notes hold their
 * top frames while each variant's gets were measured (the bad-credential attacks are then left
 * out: they would run on profiled gateways); `attacks: false` (`--auth-attacks=false`) leaves
 * them out too.
 */
export async function authBench(opts: { durationMs: number; concurrency: number; bindings: number; roles: number; profile?: boolean; attacks?: boolean }): Promise<{ rows: Row[]; notes: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-auth-'));
  const children: ChildProcess[] = [];
  const notes: string[] = [];
  try {
    const tokenFile = join(dir, 'tokens.csv');
    await writeFile(tokenFile, `${BENCH_TOKEN},bench-token-user,9001,bench-readers\n`);
    const profDir = (name: string) => join(dir, `prof-${name}`);
    const profiled = (name: string) => (opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir(name)}`] : []);
    const open = await startBenchGateway(join(dir, 'allow'), ['--authorization-mode=AlwaysAllow'], profiled('allow'));
    children.push(open.process);
    const rbac = await startBenchGateway(join(dir, 'rbac'), ['--authorization-mode=Node,RBAC', `--token-auth-file=${tokenFile}`], profiled('rbac'));
    children.push(rbac.process);

    const path = '/api/v1/namespaces/bench/configmaps/cm';
    for (const gw of [open, rbac]) {
      const t = target(gw.url, gw.creds, 8);
      await mustCall(t, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
      await mustCall(t, 'POST', '/api/v1/namespaces/bench/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'v' } });
    }

    // The policy: `roles` Roles, `bindings` RoleBindings naming other users, and one binding
    // each for the benchmark's x509 user, token-file group and service account.
    const admin = target(rbac.url, rbac.creds, 16);
    const rules = (i: number) => [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps', `things-${i}`] }];
    await Promise.all(Array.from({ length: opts.roles }, (_, i) => mustCall(admin, 'POST', `/apis/${RBAC}/v1/namespaces/bench/roles`, { metadata: { name: `role-${i}` }, rules: rules(i) })));
    for (let start = 0; start < opts.bindings; start += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, opts.bindings - start) }, (_, j) => {
          const i = start + j;
          return mustCall(admin, 'POST', `/apis/${RBAC}/v1/namespaces/bench/rolebindings`, {
            metadata: { name: `binding-${i}` },
            roleRef: { apiGroup: RBAC, kind: 'Role', name: `role-${i % opts.roles}` },
            subjects: [{ kind: 'User', name: `user-${i}` }],
          });
        }),
      );
    }
    const bindTo = (name: string, subject: Record<string, string>) =>
      mustCall(admin, 'POST', `/apis/${RBAC}/v1/namespaces/bench/rolebindings`, { metadata: { name }, roleRef: { apiGroup: RBAC, kind: 'Role', name: `role-${opts.roles - 1}` }, subjects: [subject] });
    await bindTo('bench-x509', { kind: 'User', name: 'bench-x509-user' });
    await bindTo('bench-token', { kind: 'Group', name: 'bench-readers' });
    await mustCall(admin, 'POST', '/api/v1/namespaces/bench/serviceaccounts', { metadata: { name: 'reader' } });
    await bindTo('bench-sa', { kind: 'ServiceAccount', name: 'reader', namespace: 'bench' });
    const tr = await mustCall(admin, 'POST', '/api/v1/namespaces/bench/serviceaccounts/reader/token', { kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    const saToken = JSON.parse(tr.body).status.token as string;

    const pki = await ensurePki(rbac.pkiDir);
    const cert = await issueClientCert(pki, { cn: 'bench-x509-user' });
    // The baseline reads as the same user, not as the admin: system:masters is exempt from
    // priority and fairness, so an admin baseline would also count APF's classification and
    // queuing against RBAC. Only the authorization mode differs between the two gateways.
    const openCert = await issueClientCert(await ensurePki(open.pkiDir), { cn: 'bench-x509-user' });
    const variants: { name: string; gw: BenchGateway; t: HttpsTarget; token?: string }[] = [
      { name: 'baseline', gw: open, t: target(open.url, { ca: open.creds.ca, cert: openCert.certPem, key: openCert.keyPem }, opts.concurrency) },
      { name: 'x509', gw: rbac, t: target(rbac.url, { ca: rbac.creds.ca, cert: cert.certPem, key: cert.keyPem }, opts.concurrency) },
      { name: 'token-file', gw: rbac, t: target(rbac.url, { ca: rbac.creds.ca }, opts.concurrency), token: BENCH_TOKEN },
      { name: 'service-account', gw: rbac, t: target(rbac.url, { ca: rbac.creds.ca }, opts.concurrency), token: saToken },
    ];
    const windows = new Map<string, ProfileWindow[]>(variants.map((v) => [v.name, []]));
    const totals = new Map<string, { ops: number; seconds: number; cpu: number }>();
    for (const v of variants) {
      if (!(await get(v.t, path, v.token))) throw new Error(`the benchmark request is not allowed for ${v.name}`);
      // Warm up (connections, JIT, caches) before anything is measured.
      await runLoad(opts.concurrency, Math.min(1000, opts.durationMs / 2), () => get(v.t, path, v.token));
      totals.set(v.name, { ops: 0, seconds: 0, cpu: 0 });
    }
    // Interleaved rounds, so drift of a noisy machine spreads over every variant alike.
    const ROUNDS = 3;
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of variants) {
        const from = monotonicMicros();
        const cpuBefore = cpuSeconds(v.gw.process.pid!);
        const r = await runLoad(opts.concurrency, opts.durationMs / ROUNDS, () => get(v.t, path, v.token));
        windows.get(v.name)!.push({ from, to: monotonicMicros() });
        totals.get(v.name)!.cpu += cpuSeconds(v.gw.process.pid!) - cpuBefore;
        if (r.errors > 0) throw new Error(`${r.errors} requests failed for ${v.name}`);
        const t = totals.get(v.name)!;
        t.ops += r.ops;
        t.seconds += r.seconds;
      }
    }
    const rate = (name: string) => totals.get(name)!.ops / (totals.get(name)!.seconds || 1);
    const baseline = rate('baseline');
    const x509 = rate('x509');
    const tokenFile_ = rate('token-file');
    const sa = rate('service-account');
    const row = (metric: string, value: number): Row => ({ metric, orch: value, baseline, baselineName: 'AlwaysAllow + same x509 user, same run', unit: 'gets/s', higherIsBetter: true });
    // The serving gateway's CPU per get: steadier than gets/s when the machine is shared.
    const cpuPerGet = (name: string) => (totals.get(name)!.cpu * 1e6) / totals.get(name)!.ops;
    const cpuRow = (metric: string, name: string): Row => ({ metric: `gateway CPU per get (user + system), ${metric}`, orch: cpuPerGet(name), baseline: cpuPerGet('baseline'), baselineName: 'AlwaysAllow + same x509 user, same run', unit: 'µs', higherIsBetter: false });
    if (opts.profile) {
      // A clean exit (SIGINT) writes the profile.
      for (const gw of [open, rbac]) await new Promise((r) => (gw.process.once('exit', r), gw.process.kill('SIGINT')));
      for (const v of variants) {
        const summary = await profileSummary(profDir(v.gw === open ? 'allow' : 'rbac'), windows.get(v.name), 20, true);
        notes.push(`gateway CPU profile, ${v.name} gets (self time of the main thread's busy time):\n    ${summary.join('\n    ')}`);
      }
    }
    const chains = await measureChains();
    const withAttacks = opts.attacks !== false && !opts.profile;
    const attacks = withAttacks ? await badCredentialsAttacks({ rbac, tokenFile, victimCert: cert, issuer: decodeJwt(saToken).iss as string, dir, path, children }) : [];
    const control = withAttacks ? [await contentionControl(target(rbac.url, { ca: rbac.creds.ca, cert: cert.certPem, key: cert.keyPem }, 4), path)] : [];
    const rows = [
      row(`RBAC (${opts.bindings} bindings, ${opts.roles} roles) + x509`, x509),
      row(`RBAC + static token file`, tokenFile_),
      row(`RBAC + service-account JWT (ES256, lookup on)`, sa),
      cpuRow(`RBAC (${opts.bindings} bindings, ${opts.roles} roles) + x509`, 'x509'),
      cpuRow('RBAC + static token file', 'token-file'),
      cpuRow('RBAC + service-account JWT', 'service-account'),
      chainOverheadRow(chains),
      ...attacks.flatMap(([defended, undefended]) => [attackRow(defended), attackRow(undefended), attackCpuRow(defended, undefended)]),
      ...control,
    ];
    return { rows, notes };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The authenticator chain's own cost (in-process, no I/O): six authenticators, the sixth
 * succeeding, through unionAuthenticator (passport strategies in one passport.authenticate
 * chain) against a plain loop over the same six. Median of three rounds of 100,000.
 */
function chainOverheadRow(c: { passport: number; loop: number }): Row {
  return { metric: 'authenticator chain of 6 (passport strategies), per authentication, in-process', orch: c.passport, baseline: c.loop, baselineName: 'a plain for-loop over the same authenticators', unit: 'µs', higherIsBetter: false };
}

async function measureChains(): Promise<{ passport: number; loop: number }> {
  const decline: Authenticator = { authenticate: async () => null };
  const accept: Authenticator = { authenticate: async () => ({ username: 'u', groups: ['g'] }) };
  const list = [decline, decline, decline, decline, decline, accept];
  const loop = async (req: { headers: Record<string, string> }): Promise<UserInfo | null> => {
    for (const a of list) {
      const user = await a.authenticate(req);
      if (user) return user;
    }
    return null;
  };
  const chain = unionAuthenticator(list);
  const perCall = async (fn: (req: { headers: Record<string, string> }) => Promise<unknown>) => {
    const n = 100_000;
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn({ headers: { authorization: 'Bearer x' } });
    return ((performance.now() - t) * 1000) / n;
  };
  const rounds: { passport: number; loop: number }[] = [];
  for (let r = 0; r < 4; r++) rounds.push({ passport: await perCall((q) => chain.authenticate(q)), loop: await perCall(loop) });
  // The first round warms up; the median of the other three.
  const median = (k: 'passport' | 'loop') => rounds.slice(1).map((x) => x[k]).sort((a, b) => a - b)[1];
  return { passport: median('passport'), loop: median('loop') };
}

/** The bench config map and a binding that lets the x509 victim read it, on a gateway of its own. */
async function seedVictim(admin: HttpsTarget, path: string): Promise<void> {
  await mustCall(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  await mustCall(admin, 'POST', '/api/v1/namespaces/bench/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'v' } });
  await mustCall(admin, 'POST', `/apis/${RBAC}/v1/namespaces/bench/roles`, { metadata: { name: 'bench-reader' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }] });
  await mustCall(admin, 'POST', `/apis/${RBAC}/v1/namespaces/bench/rolebindings`, { metadata: { name: 'bench-x509' }, roleRef: { apiGroup: RBAC, kind: 'Role', name: 'bench-reader' }, subjects: [{ kind: 'User', name: 'bench-x509-user' }] });
  if (!(await get(admin, path))) throw new Error('the bench config map is not readable on the gateway without limiter');
}

/** One attack on one gateway and the victim's p99 before and during it. */
interface AttackPair extends AttackResult {
  what: string;
  source: string;
  defended: boolean;
  concurrency: number;
  lowPriority: boolean;
  idle: number;
  attacked: number;
  /** The attacked gateway's CPU (user + system) during the same attack run again without the victim, and its attempts. */
  gatewayCpuSeconds: number;
  cpuAttempts: number;
}

const thousands = (n: number) => n.toLocaleString('en-US');

/**
 * The victim's p99 during one attack against its p99 alone. The attack rate is in the metric: an
 * attacker at low CPU priority must not pass for a stronger defence by attacking more slowly; so
 * is what the attempts got (401s, 429s, connections reset before TLS): every one of them nothing.
 */
function attackRow(r: AttackPair): Row {
  const who = r.lowPriority ? 'attacker at nice 19, as if on a machine of its own' : 'attacker sharing the cores as an equal';
  const got = [r.unauthorized && `${thousands(r.unauthorized)} × 401`, r.limited && `${thousands(r.limited)} × 429`, r.refused && `${thousands(r.refused)} reset before TLS`].filter(Boolean).join(', ');
  const defence = r.defended ? 'limiter on (default: 100 failures per 10 s, 1 min cool-off)' : 'limiter off (--authentication-failure-limit=0)';
  return {
    metric: `p99 of an x509 client (4 concurrent, from 127.0.0.1) while ${r.what} are tried from ${r.source} (${r.concurrency} concurrent; ${who}; ${Math.round(r.attempts / r.seconds)} attempts/s), ${defence}: ${got}`,
    orch: r.attacked,
    baseline: r.idle,
    baselineName: 'its p99 alone just before (goal: ≤ 2x)',
    unit: 'ms',
    higherIsBetter: false,
  };
}

/**
 * What the defence buys in the gateway's own terms, steadier than a p99 on a shared machine: its
 * CPU per attempt of one attack with the limiter on (mostly connections reset before TLS) against
 * the same attack with it off (every attempt authenticated and answered 401), each measured in a
 * run of the attack without the victim.
 */
function attackCpuRow(defended: AttackPair, undefended: AttackPair): Row {
  const who = defended.lowPriority ? 'attacker at nice 19' : 'attacker sharing the cores as an equal';
  const perAttempt = (r: AttackPair) => (r.gatewayCpuSeconds * 1e6) / r.cpuAttempts;
  return {
    metric: `gateway CPU per attempt while ${defended.what} are tried (${defended.concurrency} concurrent; ${who}), limiter on`,
    orch: perAttempt(defended),
    baseline: perAttempt(undefended),
    baselineName: 'the same attack with the limiter off, same run',
    unit: 'µs',
    higherIsBetter: false,
  };
}

/**
 * Pairs of the victim's p99 alone (3 s) and then while an attacker process (auth-attacker.ts:
 * its own process, so its client work does not run on the victim's event loop) tries 10,000
 * garbled bearer tokens (as many connections as the victim, then 16), 1,000 TLS connections
 * with client certificates of another CA, and for comparison 1,000 fresh connections without
 * one. On a 2-core machine the attacker's own TLS work costs as much CPU as the gateway's, so
 * the attacks run at nice 19 (the attacker's CPU is not the server's), and the 16-token and
 * certificate attacks once more at equal priority. Each attack runs on the defended gateway
 * (limiter on, its defaults) and right after on a twin started here with the limiter off (same
 * PKI, token file and modes; its store holds only the victim's config map and binding), each time
 * from a loopback address of its own (127.0.0.2, .3, ...: a limited address stays refused for
 * the cool-off, and every attack starts uncounted). The victim reads from 127.0.0.1. Every
 * attempt must get nothing: a 401 or 429 Status, or a connection reset before TLS (the attacker
 * fails otherwise). Each attack then runs once more without the victim, from a fresh address,
 * for the attacked gateway's CPU per attempt.
 */
async function badCredentialsAttacks(o: { rbac: BenchGateway; tokenFile: string; victimCert: CertAndKey; issuer: string; dir: string; path: string; children: ChildProcess[] }): Promise<[AttackPair, AttackPair][]> {
  const { rbac, dir, path, issuer } = o;
  const ca = rbac.creds.ca;
  // The same attacks on a twin of the RBAC gateway with the limiter off: what the defence buys.
  const unlimited = await startBenchGateway(join(dir, 'rbac-unlimited'), ['--authorization-mode=Node,RBAC', `--token-auth-file=${o.tokenFile}`, `--pki-dir=${rbac.pkiDir}`, '--authentication-failure-limit=0']);
  o.children.push(unlimited.process);
  await seedVictim(target(unlimited.url, unlimited.creds, 4), path);
  const side = (gw: BenchGateway) => ({ url: gw.url, pid: gw.process.pid!, victim: target(gw.url, { ca, cert: o.victimCert.certPem, key: o.victimCert.keyPem }, 4) });
  const gateways = { defended: side(rbac), undefended: side(unlimited) };
  // The twin's victim path warmed up like the others (JIT, caches).
  await runLoad(4, 1000, () => get(gateways.undefended.victim, path));
  const strangerPki = await ensurePki(join(dir, 'stranger-ca'));
  const strangers: CertAndKey[] = await Promise.all(Array.from({ length: 8 }, (_, i) => issueClientCert(strangerPki, i === 0 ? { cn: 'admin', orgs: ['system:masters'] } : { cn: `stranger-${i}` })));
  const certs = strangers.map((c) => ({ certPem: c.certPem, keyPem: c.keyPem }));
  const attacks: { what: string; job: Omit<AttackJob, 'url' | 'ca' | 'path' | 'issuer' | 'source'>; lowPriority: boolean }[] = [
    { what: '10,000 garbled bearer tokens', job: { concurrency: 4, tokens: 10_000, certs: [] }, lowPriority: true },
    { what: '10,000 garbled bearer tokens', job: { concurrency: 16, tokens: 10_000, certs: [] }, lowPriority: true },
    { what: '10,000 garbled bearer tokens', job: { concurrency: 16, tokens: 10_000, certs: [] }, lowPriority: false },
    { what: '1,000 TLS connections with client certificates of another CA', job: { concurrency: 4, tokens: 0, certs, certAttempts: 1_000 }, lowPriority: true },
    { what: '1,000 TLS connections with client certificates of another CA', job: { concurrency: 4, tokens: 0, certs, certAttempts: 1_000 }, lowPriority: false },
    { what: '(for comparison) 1,000 TLS connections without a client certificate, each with a garbled token', job: { concurrency: 4, tokens: 1_000, certs: [], freshConnections: true }, lowPriority: true },
  ];
  const pairs: [AttackPair, AttackPair][] = [];
  let nextSource = 2;
  for (const a of attacks) {
    const run = async (defended: boolean): Promise<AttackPair> => {
      const gw = defended ? gateways.defended : gateways.undefended;
      const source = `127.0.0.${nextSource++}`;
      const r = await attackPair({ ...a.job, url: gw.url, ca, path, issuer, source }, a.lowPriority, { victim: gw.victim });
      // Once more without the victim, from an address not yet counted, for the gateway's CPU.
      const alone = await attackPair({ ...a.job, url: gw.url, ca, path, issuer, source: `127.0.0.${nextSource++}` }, a.lowPriority, { gatewayPid: gw.pid });
      return { ...r, gatewayCpuSeconds: alone.gatewayCpuSeconds, cpuAttempts: alone.attempts, what: a.what, source, defended, concurrency: a.job.concurrency, lowPriority: a.lowPriority };
    };
    pairs.push([await run(true), await run(false)]);
  }
  return pairs;
}

/**
 * The control for the attacks by an attacker sharing the cores as an equal: the victim's p99
 * alone (3 s), then while a process that only spins, with no connection to the gateway, runs
 * at equal priority (5 s; one core, as the single-threaded attacker takes at most). What the
 * machine's contention alone does to the victim, whatever the gateway does.
 */
async function contentionControl(victim: HttpsTarget, path: string): Promise<Row> {
  const idleUntil = performance.now() + 3000;
  const idle = await victimLoad(victim, path, () => performance.now() > idleUntil);
  const spinner = spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' });
  try {
    const busyUntil = performance.now() + 5000;
    const busy = await victimLoad(victim, path, () => performance.now() > busyUntil);
    return {
      metric: 'p99 of an x509 client (4 concurrent, from 127.0.0.1) while a process that only spins (no connection) shares the cores as an equal: the control for the attacks sharing the cores',
      orch: busy.p99,
      baseline: idle.p99,
      baselineName: 'its p99 alone just before',
      unit: 'ms',
      higherIsBetter: false,
    };
  } finally {
    spinner.kill('SIGKILL');
  }
}

/** The victim's p99 and gets while it reads with 4 concurrent gets until `until()` holds; throws if one is refused. */
async function victimLoad(victim: HttpsTarget, path: string, until: () => boolean): Promise<{ p99: number; gets: number }> {
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (!until()) {
        const t = performance.now();
        if (!(await get(victim, path))) throw new Error('the victim client was refused');
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { p99: percentile(latencies.sort((a, b) => a - b), 99), gets: latencies.length };
}

/**
 * Runs the attacker process on `job`. With a victim: the victim's p99 alone for 3 s (the
 * attacker started and its credentials made), then while the attack runs. Without: the attack
 * alone, and the gateway's CPU (user + system, /proc) while it runs. `lowPriority`: the
 * attacker runs at the lowest CPU priority (nice 19), the stand-in for an attacker on a machine
 * of its own; otherwise it competes with the gateway and the victim for this machine's cores as
 * an equal.
 */
async function attackPair(job: AttackJob, lowPriority: boolean, beside: { victim: HttpsTarget } | { gatewayPid: number }): Promise<AttackResult & { idle: number; attacked: number; gatewayCpuSeconds: number }> {
  const attacker = spawn(process.execPath, [join(__dirname, 'auth-attacker.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    if (lowPriority) setPriority(attacker.pid!, 19);
    const lines = createInterface({ input: attacker.stdout! });
    const exited = new Promise<never>((_, reject) => attacker.once('exit', (code) => reject(new Error(`the attacker exited with ${code}`))));
    const nextLine = () => Promise.race([new Promise<string>((resolve) => lines.once('line', resolve)), exited]);
    attacker.stdin!.write(`${JSON.stringify(job)}\n`);
    if ((await nextLine()) !== 'ready') throw new Error('the attacker did not get ready');
    let done = false;
    const finished = () =>
      nextLine()
        .then((line) => JSON.parse(line) as AttackResult)
        .finally(() => (done = true));
    if ('gatewayPid' in beside) {
      const cpuBefore = cpuSeconds(beside.gatewayPid);
      attacker.stdin!.write('go\n');
      const result = await finished();
      return { ...result, idle: NaN, attacked: NaN, gatewayCpuSeconds: cpuSeconds(beside.gatewayPid) - cpuBefore };
    }
    const idleUntil = performance.now() + 3000;
    const idle = await victimLoad(beside.victim, job.path, () => performance.now() > idleUntil);
    const result = finished();
    attacker.stdin!.write('go\n');
    const [r, attacked] = await Promise.all([result, victimLoad(beside.victim, job.path, () => done)]);
    return { ...r, idle: idle.p99, attacked: attacked.p99, gatewayCpuSeconds: NaN };
  } finally {
    attacker.kill('SIGKILL');
  }
}
