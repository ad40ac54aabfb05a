import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { freePort, launchChromium, navigate } from '@orch/testing';
import { appMain, startBenchGateway } from './gateway-process';
import { call, createDefaultServiceAccounts, percentile, rssMiB, target, type HttpsTarget } from './load';
import type { Row } from './report';

// The dashboard in headless Chromium against a real gateway and dashboard process: first useful
// paint of 1,000 pods, frame times while its table receives 100 watch events/s, watch-event to
// row latency, and the dashboard's and gateway's cost with 10 dashboards open. Each figure is
// set beside a baseline measured in the same run (a static table, an idle page, a raw watch,
// no dashboards).

// Page functions run in the browser; this project compiles without the DOM library.
declare const document: any;
declare const performance: { now(): number };
declare const requestAnimationFrame: (f: (t: number) => void) => number;
declare const sessionStorage: { setItem(key: string, value: string): void };
declare const window: any;

export interface DashboardBenchOptions {
  pods: number;
  eventsPerSecond: number;
  seconds: number;
  dashboards: number;
}

const NAMESPACE = 'bench';
const pod = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NAMESPACE, labels: { app: 'bench' } }, spec: { containers: [{ name: 'c', image: 'orch/node' }] } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

/** CPU seconds (user + system) a process has used (Linux /proc; clock ticks of 100 Hz). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Creates `n` objects with bounded concurrency; fails on the first non-201. */
async function createAll(t: HttpsTarget, path: string, bodies: string[], concurrency = 32): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const r = await call(t, 'POST', path, body);
        if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.body}`);
      }
    }),
  );
}

/** Patches one pod's annotation per tick at `rate`/s for `seconds`; returns how many writes were made. */
async function writeEvents(t: HttpsTarget, names: string[], rate: number, seconds: number): Promise<number> {
  const started = Date.now();
  let i = 0;
  const inflight: Promise<unknown>[] = [];
  while (Date.now() - started < seconds * 1000) {
    const due = Math.floor(((Date.now() - started) / 1000) * rate);
    for (; i < due; i++) inflight.push(call(t, 'PATCH', `/api/v1/namespaces/${NAMESPACE}/pods/${names[i % names.length]}`, JSON.stringify({ metadata: { annotations: { tick: String(i) } } }), 'application/merge-patch+json'));
    await sleep(5);
  }
  await Promise.all(inflight);
  return i;
}

/** Frame intervals (ms) the page sees during `ms`, measured with requestAnimationFrame. */
function frameIntervals(page: Page, ms: number): Promise<number[]> {
  return page.evaluate(
    (duration: number) =>
      new Promise<number[]>((resolve) => {
        const out: number[] = [];
        let last = performance.now();
        const end = last + duration;
        const tick = (t: number) => {
          out.push(t - last);
          last = t;
          if (t < end) requestAnimationFrame(tick);
          else resolve(out);
        };
        requestAnimationFrame(tick);
      }),
    ms,
  );
}

/** Loads `url` in a fresh document and returns ms from navigation start until the pods table has `rows` rows. */
async function usefulPaintMs(page: Page, url: string, rows: number): Promise<number> {
  await navigate(page, 'about:blank');
  await navigate(page, url);
  const handle = await page.waitForFunction((n: number) => (document.querySelectorAll('table[data-resource="pods"] tbody tr').length >= n ? performance.now() : 0), { polling: 'raf', timeout: 60_000 }, rows);
  return (await handle.jsonValue()) as number;
}

export async function dashboardBench(opts: DashboardBenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-dash-'));
  const children: ChildProcess[] = [];
  let browser: Browser | undefined;
  try {
    const gateway = await startBenchGateway(join(dir, 'gw'), ['--write-component-kubeconfigs']);
    children.push(gateway.process);
    const admin = target(gateway.url, gateway.creds);
    const setup: [string, unknown][] = [
      ['/api/v1/namespaces', { metadata: { name: NAMESPACE } }],
      ['/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'bench-admin' } }],
      ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { metadata: { name: 'bench-admin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'ServiceAccount', name: 'bench-admin', namespace: 'default' }] }],
    ];
    for (const [path, body] of setup) {
      const r = await call(admin, 'POST', path, JSON.stringify(body));
      if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.body}`);
    }
    await createDefaultServiceAccounts(admin, [NAMESPACE]);
    const tr = await call(admin, 'POST', '/api/v1/namespaces/default/serviceaccounts/bench-admin/token', JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }));
    const token = JSON.parse(tr.body).status.token as string;
    const names = Array.from({ length: opts.pods }, (_, i) => `p-${String(i).padStart(5, '0')}`);
    await createAll(admin, `/api/v1/namespaces/${NAMESPACE}/pods`, names.map(pod));

    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const dash = spawn(process.execPath, [appMain('dashboard'), `--secure-port=${port}`, `--server=${gateway.url}`, `--certificate-authority=${join(gateway.pkiDir, 'ca.crt')}`, `--tls-cert-file=${join(gateway.pkiDir, 'dashboard.crt')}`, `--tls-private-key-file=${join(gateway.pkiDir, 'dashboard.key')}`], { stdio: 'ignore' });
    children.push(dash);
    for (let i = 0; i < 300; i++) {
      const up = await new Promise<boolean>((resolve) => https.get(`${url}/auth/session`, { rejectUnauthorized: false }, (r) => (r.resume(), resolve(true))).on('error', () => resolve(false)));
      if (up) break;
      await sleep(100);
    }
    const dashboardIdleRss = await rssMiB(dash.pid!);

    browser = await launchChromium(['--ignore-certificate-errors']);
    const page = await browser.newPage();
    // When each new pod's name first reaches the page on its watch WebSocket (wall clock, ms).
    await page.evaluateOnNewDocument(() => {
      const seen: Record<string, number> = ((window as { wsSeen: Record<string, number> }).wsSeen = {});
      const Native = window.WebSocket;
      window.WebSocket = class extends Native {
        constructor(...args: unknown[]) {
          super(...args);
          this.addEventListener('message', (m: { data: unknown }) => {
            for (const match of String(m.data).matchAll(/\bn-\d+\b/g)) seen[match[0]] ??= Date.now();
          });
        }
      };
    });
    let lists = 0;
    page.on('request', (r) => {
      if (/\/k8s\/api\/v1\/namespaces\/bench\/pods(\?|$)/.test(r.url()) && !r.url().includes('watch=')) lists++;
    });
    await page.setViewport({ width: 1280, height: 900 });
    await navigate(page, url);
    await page.waitForSelector('#token');
    await page.type('#token', token);
    await page.keyboard.press('Enter');
    await page.waitForSelector('header .user');
    await page.evaluate((ns: string) => sessionStorage.setItem('namespace', ns), NAMESPACE);
    const podsUrl = `${url}/#/workloads/pods`;

    // 1. First useful paint: the pods view with every row, from navigation start; baseline: the
    //    same number of rows as a static server-rendered table in the same browser.
    const paints: number[] = [];
    for (let i = 0; i < 3; i++) paints.push(await usefulPaintMs(page, podsUrl, opts.pods));
    const staticTable = `<table data-resource="pods"><tbody>${names.map((n) => `<tr><td>${n}</td><td>0/1</td><td>Pending</td><td>0</td><td>1m</td></tr>`).join('')}</tbody></table>`;
    const staticPaints: number[] = [];
    for (let i = 0; i < 3; i++) {
      await navigate(page, 'about:blank');
      const started = Date.now();
      await page.setContent(staticTable);
      await page.waitForFunction((n: number) => document.querySelectorAll('table[data-resource="pods"] tbody tr').length >= n, { polling: 'raf' }, opts.pods);
      staticPaints.push(Date.now() - started);
    }
    rows.push({ metric: `first useful paint, ${opts.pods} pods (median of 3)`, orch: median(paints), baseline: median(staticPaints), baselineName: 'static table of the same rows', unit: 'ms', higherIsBetter: false });

    // 2. Frame time p95 while the table receives watch events; baseline: the same page idle.
    await navigate(page, 'about:blank');
    await navigate(page, podsUrl);
    await page.waitForFunction((n: number) => document.querySelectorAll('table[data-resource="pods"] tbody tr').length >= n, { timeout: 60_000 }, opts.pods);
    const idle = await frameIntervals(page, opts.seconds * 1000);
    const [busy, written] = await Promise.all([frameIntervals(page, opts.seconds * 1000), writeEvents(admin, names, opts.eventsPerSecond, opts.seconds)]);
    rows.push({ metric: `frame time p95, ${opts.eventsPerSecond} events/s (${written} written)`, orch: percentile([...busy].sort((a, b) => a - b), 95), baseline: percentile([...idle].sort((a, b) => a - b), 95), baselineName: 'same page, no events', unit: 'ms', higherIsBetter: false });

    // 3. Watch event → row shown in the page; baseline: the event reaching a raw watch on the gateway.
    const rawSeen = new Map<string, number>();
    const watch = https.get(`${gateway.url}/api/v1/namespaces/${NAMESPACE}/pods?watch=1&resourceVersion=0`, { agent: admin.agent, headers: { accept: 'application/json' } }, (res) => {
      let buf = '';
      res.on('data', (c: Buffer) => {
        buf += c.toString();
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const name = /"name":"(n-\d+)"/.exec(buf.slice(0, nl))?.[1];
          if (name && !rawSeen.has(name)) rawSeen.set(name, Date.now());
          buf = buf.slice(nl + 1);
        }
      });
    });
    await sleep(500);
    const shown: number[] = [];
    const raw: number[] = [];
    const inPage: number[] = [];
    const listsBefore = lists;
    for (let i = 0; i < 20; i++) {
      const name = `n-${i}`;
      const sent = Date.now();
      const r = await call(admin, 'POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod(name));
      if (r.status !== 201) throw new Error(`create ${name}: ${r.status}`);
      await page.waitForFunction((n: string) => document.querySelector(`tr[data-name="${n}"]`) !== null, { polling: 'raf', timeout: 30_000 }, name);
      shown.push(Date.now() - sent);
      inPage.push(((await page.evaluate((n: string) => (window as { wsSeen: Record<string, number> }).wsSeen[n], name)) ?? NaN) - sent);
      for (let j = 0; j < 100 && !rawSeen.has(name); j++) await sleep(10);
      raw.push((rawSeen.get(name) ?? NaN) - sent);
    }
    watch.destroy();
    rows.push({ metric: 'create → row shown (p50 of 20)', orch: median(shown), baseline: median(raw), baselineName: 'create → event on a raw watch', unit: 'ms', higherIsBetter: false });
    rows.push({ metric: `create → event on the page's watch socket (p50 of 20; ${lists - listsBefore} relists meanwhile)`, orch: median(inPage), baseline: median(raw), baselineName: 'create → event on a raw watch', unit: 'ms', higherIsBetter: false });

    // 4. Ten dashboards open on the pods view: dashboard RSS and gateway CPU under the same writes.
    await navigate(page, 'about:blank');
    await sleep(1000);
    const gatewayCpuBefore = await cpuSeconds(gateway.process.pid!);
    await writeEvents(admin, names, 10, opts.seconds);
    const gatewayCpuAlone = (await cpuSeconds(gateway.process.pid!)) - gatewayCpuBefore;
    const pages: Page[] = [page];
    for (let i = 1; i < opts.dashboards; i++) pages.push(await browser.newPage());
    // One at a time in front: a background tab gets no animation frames, so it renders nothing (its watches stay open).
    for (const p of pages) {
      await p.bringToFront();
      await navigate(p, podsUrl);
      await p.waitForFunction((n: number) => document.querySelectorAll('table[data-resource="pods"] tbody tr').length >= n, { timeout: 120_000 }, opts.pods);
    }
    const gatewayCpuStart = await cpuSeconds(gateway.process.pid!);
    await writeEvents(admin, names, 10, opts.seconds);
    const gatewayCpuWith = (await cpuSeconds(gateway.process.pid!)) - gatewayCpuStart;
    rows.push({ metric: `dashboard RSS, ${opts.dashboards} dashboards open`, orch: await rssMiB(dash.pid!), baseline: dashboardIdleRss, baselineName: 'dashboard with none open', unit: 'MiB', higherIsBetter: false });
    rows.push({ metric: `gateway CPU, 10 writes/s for ${opts.seconds} s, ${opts.dashboards} dashboards`, orch: gatewayCpuWith, baseline: gatewayCpuAlone, baselineName: 'same writes, no dashboard', unit: 's', higherIsBetter: false });
  } finally {
    await browser?.close();
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
