import { execFile, spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { launchChromium, navigate } from '@orch/testing';
import { kubectlAsync } from './support/kubectl';
import { startLocalPlane, type LocalPlane } from './support/local-plane';

// The dashboard in a real headless Chromium (Debian's, through puppeteer-core) on the plane
// `npm start` runs: token login, live tables (a kubectl scale shows up without reload), pod logs
// that follow, exec in a terminal, a YAML edit applied after its server-side dry-run diff, a
// view-only user without delete/scale buttons and with a clear 403, CPU/memory sparklines from the
// metrics API, event timelines, the port-forward command, a node drain whose evictions a
// PodDisruptionBudget refuses, and accessibility basics.
// Screenshots of the main views go to tmp/dashboard-e2e/ (CI artifacts).

// Page functions run in the browser; this project compiles without the DOM library.
declare const document: any;
declare const window: any;
declare const Event: any;

const SCREENSHOTS = join(__dirname, '..', 'tmp', 'dashboard-e2e');
/** The metrics server reads every 15 s and needs two readings for a CPU rate; a loaded machine stretches that. */
const METRICS_WAIT_MS = 60_000;
const TICKER = "let i=0;setInterval(()=>console.log('tick '+(i++)),200)";
const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: ticker
        image: orch/node
        command: ["node", "-e", "${TICKER}"]
        ports: [{containerPort: 8080, name: http}]
`;
/** No web pod may go (maxUnavailable 0): drain's evictions of them are refused. */
const BUDGET = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: team}
spec:
  maxUnavailable: 0
  selector: {matchLabels: {app: web}}
`;
/** A pod no controller manages: drain evicts it for good. */
const SOLO = `apiVersion: v1
kind: Pod
metadata: {name: solo, namespace: team}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sleeper
    image: orch/node
    command: ["node", "-e", "setInterval(()=>{},1000)"]
`;

describe('dashboard in a browser', () => {
  let plane: LocalPlane;
  let browser: Browser;
  let page: Page;
  let dashboardUrl = '';
  const tokens = { admin: '', viewer: '' };

  /** kubectl as the cluster admin; its output, or an error saying what failed. */
  const kubectl = async (args: string[], input?: string) => {
    const r = await kubectlAsync({ kubeconfig: plane.kubeconfig, cacheDir: join(plane.dataDir, 'kubectl-cache') }, args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${r.code}: ${r.err}`);
    return r.out;
  };
  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  /** page.waitForFunction that, when it times out, saves a screenshot and says what the page showed. */
  const until = async <A>(what: string, fn: (arg: A) => unknown, arg?: A, p: Page = page, timeout?: number) => {
    try {
      await p.waitForFunction(fn as (arg: unknown) => unknown, timeout ? { timeout } : {}, arg);
    } catch (err) {
      await shot(`failed-${what.replace(/\W+/g, '-')}`, p).catch(() => undefined);
      const shown = await p.evaluate(() => document.querySelector('main')?.innerText ?? document.body.innerText).catch(() => '');
      throw new Error(`${what}: ${(err as Error).message}\nthe page showed:\n${String(shown).slice(0, 3000)}`);
    }
  };

  /**
   * Opens tab `name` of an object's detail view once its access checks are done (the tab list
   * grows when they answer) and waits until the tab is selected, clicking again if a re-render
   * swallowed the click.
   */
  const selectTab = async (name: string, p: Page = page) => {
    await p.waitForSelector('.actions[data-access="checked"]');
    for (let attempt = 1; ; attempt++) {
      await p.click(`#tab-${name}`);
      try {
        await p.waitForFunction((id: string) => document.getElementById(id)?.getAttribute('aria-selected') === 'true', { timeout: 3000 }, `tab-${name}`);
        return;
      } catch (err) {
        if (attempt === 3) throw new Error(`tab ${name} not selected after 3 clicks: ${(err as Error).message}`);
      }
    }
  };

  /** Logs in on a fresh page of `context`'s browser with `token`, waiting for the signed-in header. */
  const loginPage = async (token: string, incognito = false): Promise<Page> => {
    const context = incognito ? await browser.createBrowserContext() : browser.defaultBrowserContext();
    const p = await context.newPage();
    p.setDefaultTimeout(20_000);
    await p.setViewport({ width: 1280, height: 900 });
    await navigate(p, dashboardUrl);
    await p.waitForSelector('label[for="token"]');
    await p.type('#token', token);
    await p.keyboard.press('Enter');
    await p.waitForSelector('header .user');
    return p;
  };

  beforeAll(async () => {
    expect(spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status).toBe(0);
    mkdirSync(SCREENSHOTS, { recursive: true });
    plane = await startLocalPlane();
    // npm start prints the address as it starts the dashboard; it listens a moment later.
    for (let i = 0; i < 150 && !plane.output().includes('serving the dashboard'); i++) await new Promise((r) => setTimeout(r, 200));
    const output = plane.output();
    expect(output).toContain('serving the dashboard');
    dashboardUrl = /dashboard at (https:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
    expect(dashboardUrl).toBe(`https://127.0.0.1:${plane.env.ORCH_DASHBOARD_PORT}`);
    // The admin login exactly as npm start prints it.
    const commands = /an admin login token:\n\[orch\] {3}(.+)\n/.exec(output)?.[1] ?? '';
    expect(commands).toContain('create token dashboard-admin');
    const printed = new Promise<string>((resolve, reject) =>
      execFile('sh', ['-c', commands], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${commands}: ${stderr}`)) : resolve(stdout))),
    );
    // Independent set-up steps run side by side (each kubectl call costs a process start).
    await kubectl(['create', 'namespace', 'team']);
    await Promise.all([
      kubectl(['apply', '-f', '-'], MANIFEST),
      kubectl(['-n', 'team', 'create', 'rolebinding', 'viewer', '--clusterrole=view', '--serviceaccount=team:viewer']),
      kubectl(['-n', 'team', 'create', 'serviceaccount', 'viewer']).then(async () => (tokens.viewer = (await kubectl(['-n', 'team', 'create', 'token', 'viewer'])).trim())),
      printed.then((out) => (tokens.admin = out.trim().split('\n').pop()!)),
    ]);
    // Chromium trusts exactly the dashboard's certificate (issued by the cluster CA) by its key.
    const spki = createHash('sha256')
      .update(new X509Certificate(readFileSync(join(plane.dataDir, 'pki', 'dashboard.crt'))).publicKey.export({ type: 'spki', format: 'der' }))
      .digest('base64');
    // Debian's chromium: installed when missing (the suite fails rather than skips without it).
    browser = await launchChromium([`--ignore-certificate-errors-spki-list=${spki}`]);
    page = await loginPage(tokens.admin);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await plane?.stop();
  }, 40_000);

  it('logs in with a token and shows the overview: nodes, pods by phase, warnings', async () => {
    expect(await page.$eval('header .user', (e) => e.textContent)).toBe('system:serviceaccount:orch-system:dashboard-admin');
    await page.waitForFunction(() => document.querySelector('section[aria-label="Nodes"] tbody tr')?.textContent?.includes('Ready'));
    await page.waitForFunction(() => Number(document.querySelector('.phase[data-phase="Running"] dd')?.textContent) >= 1);
    // The session cookie is HttpOnly: page scripts cannot read it.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await shot('overview');
  });

  it('shows the pods of a Deployment scaled by kubectl without a reload', async () => {
    await navigate(page, `${dashboardUrl}/#/workloads/pods`);
    // The namespace's list answered before counting starts: the table of all namespaces shows the
    // same one pod, so its row count alone does not say the new list is done.
    const listed = page.waitForResponse((r) => /\/k8s\/api\/v1\/namespaces\/team\/pods$/.test(r.url()) && r.request().method() === 'GET');
    await page.select('#namespace', 'team');
    await listed;
    await page.waitForFunction(() => document.querySelectorAll('table[data-resource="pods"] tbody tr').length === 1);
    const marker = await page.evaluate(() => ((window as { marker: number }).marker = Math.random()));
    // The new rows come from the table's watch: no list request is made meanwhile (a refused
    // watch made the page relist every 500 ms, which also showed the rows).
    const lists: string[] = [];
    const countLists = (r: HTTPRequest) => void (/\/k8s\/api\/v1\/namespaces\/team\/pods(\?|$)/.test(r.url()) && !r.url().includes('watch=') && lists.push(r.url()));
    page.on('request', countLists);
    await kubectl(['-n', 'team', 'scale', 'deployment', 'web', '--replicas=3']);
    await until('three pods', () => document.querySelectorAll('table[data-resource="pods"] tbody tr').length === 3);
    await new Promise((r) => setTimeout(r, 1000));
    page.off('request', countLists);
    expect(lists).toEqual([]);
    // The same document: no reload happened.
    expect(await page.evaluate(() => (window as { marker: number }).marker)).toBe(marker);
    const headers = await page.$$eval('table[data-resource="pods"] thead th', (ths) => ths.map((t) => t.textContent));
    expect(headers).toEqual(expect.arrayContaining(['Name', 'Ready', 'Status', 'Restarts', 'Age']));
    await shot('workloads-pods');
  });

  it('follows a pod\'s log and runs a command in its terminal', async () => {
    await until('a Running pod', () => [...document.querySelectorAll('table[data-resource="pods"] tbody tr')].some((r: any) => r.textContent.includes('Running')));
    const pod = await page.$$eval('table[data-resource="pods"] tbody tr', (rows) => rows.find((r: any) => r.textContent.includes('Running'))!.getAttribute('data-name'));
    await page.click(`table[data-resource="pods"] tr[data-name="${pod}"] a`);
    await selectTab('logs');
    const tickOf = () => page.$eval('pre.log', (e) => Math.max(-1, ...[...(e.textContent ?? '').matchAll(/tick (\d+)/g)].map((m) => Number(m[1]))));
    await until('a log line', () => /tick \d+/.test(document.querySelector('pre.log')?.textContent ?? ''));
    const first = await tickOf();
    // New lines arrive on the open stream (follow), without asking again.
    await until('newer log lines', (n: number) => [...(document.querySelector('pre.log')?.textContent ?? '').matchAll(/tick (\d+)/g)].some((m) => Number(m[1]) >= n + 5), first);
    await shot('pod-logs');
    await selectTab('exec');
    await page.click('.exec button[type="submit"]');
    await until('terminal connected', () => document.querySelector('.terminal [role="status"]')?.textContent?.includes('connected'));
    await page.keyboard.type('echo dash-$((6*7))\n');
    await until('exec output', () => document.querySelector('.xterm-rows')?.textContent?.includes('dash-42'));
    await shot('pod-exec');
  });

  it('applies a YAML edit after showing its server-side dry-run diff', async () => {
    await navigate(page, `${dashboardUrl}/#/o/apps/v1/deployments/team/web`);
    await selectTab('yaml');
    await page.click('xpath/.//button[text()="Edit YAML"]');
    const draft = await page.$eval('#yaml-draft', (e: { value: string }) => e.value);
    const edited = draft.replace('  labels:\n    app: web\n', '  labels:\n    app: web\n    edited-in: dashboard\n');
    expect(edited).not.toBe(draft);
    await page.$eval('#yaml-draft', (e: { value: string; dispatchEvent(e: unknown): void }, v) => {
      e.value = v;
      e.dispatchEvent(new Event('input', { bubbles: true }));
    }, edited);
    expect(await page.$eval('xpath/.//button[text()="Apply"]', (b: { disabled: boolean }) => b.disabled)).toBe(true);
    await page.click('xpath/.//button[text()="Review changes"]');
    await page.waitForSelector('pre.diff .added');
    expect(await page.$$eval('pre.diff .added', (s) => s.map((x) => x.textContent))).toEqual(['+     edited-in: dashboard\n']);
    // A dry run changed nothing.
    expect(await kubectl(['-n', 'team', 'get', 'deployment', 'web', '-o', 'jsonpath={.metadata.labels.edited-in}'])).toBe('');
    await shot('yaml-diff');
    await page.click('xpath/.//button[text()="Apply"]');
    await page.waitForFunction(() => document.querySelector('[role="status"]')?.textContent?.includes('Applied as orch-dashboard'));
    expect(await kubectl(['-n', 'team', 'get', 'deployment', 'web', '-o', 'jsonpath={.metadata.labels.edited-in}'])).toBe('dashboard');
    const managers = JSON.parse(await kubectl(['-n', 'team', 'get', 'deployment', 'web', '--show-managed-fields', '-o', 'json'])).metadata.managedFields.map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`);
    expect(managers).toContain('orch-dashboard/Apply');
  });

  it('shows a view-only user no delete or scale buttons and a clear 403 where it may not list', async () => {
    const viewer = await loginPage(tokens.viewer, true);
    await navigate(viewer, `${dashboardUrl}/#/o/apps/v1/deployments/team/web`);
    await viewer.waitForSelector('.actions[data-access="checked"]');
    expect(await viewer.$$eval('.actions button', (b) => b.map((x) => x.textContent))).toEqual([]);
    await selectTab('yaml', viewer);
    expect(await viewer.$('xpath/.//button[text()="Edit YAML"]')).toBeNull();
    await navigate(viewer, `${dashboardUrl}/#/workloads/pods`);
    // It may not list namespaces: the picker is a free field.
    await viewer.type('#namespace', 'default');
    await viewer.keyboard.press('Enter');
    await viewer.waitForFunction(() => document.querySelector('[role="alert"]')?.textContent?.includes('Forbidden: your account may not list pods in namespace "default"'));
    await shot('viewer-403', viewer);
    await viewer.close();
  });

  it('has labelled controls and keyboard-usable tables, tabs and dialogs', async () => {
    await navigate(page, `${dashboardUrl}/#/o/apps/v1/deployments/team/web`);
    await page.waitForSelector('.actions[data-access="checked"]');
    // Every form control has a label (or aria-label); every table a caption and column headers.
    const unlabelled = await page.$$eval('input, select, textarea', (els) => els.filter((e: any) => !e.labels?.length && !e.getAttribute('aria-label')).map((e: any) => e.outerHTML));
    expect(unlabelled).toEqual([]);
    expect(await page.$$eval('table', (ts) => ts.filter((t) => !t.querySelector('caption') || !t.querySelector('th[scope="col"]')).length)).toBe(0);
    // Tabs: arrow keys move between them.
    await page.focus('#tab-summary');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-yaml');
    expect(await page.$eval('#tab-yaml', (t) => t.getAttribute('aria-selected'))).toBe('true');
    // A dialog opened from the keyboard takes the focus and closes with Escape.
    await page.focus('xpath/.//div[@role="toolbar"]//button[text()="Scale"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('scale-replicas');
    expect(await page.$eval('dialog[open]', (d) => document.getElementById(d.getAttribute('aria-labelledby') ?? '')?.textContent)).toBe('Scale web');
    // Tab walks the dialog's own controls; the page behind it is inert (modal).
    const walked: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      walked.push(await page.evaluate(() => (document.activeElement?.closest('dialog') ? document.activeElement.textContent : `outside: ${document.activeElement?.tagName}`)));
    }
    expect(walked.slice(0, 2)).toEqual(['Scale', 'Cancel']);
    expect(walked[2]).not.toMatch(/^outside: (A|BUTTON|INPUT|SELECT)/);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    // Closed, it gives the focus back to the button that opened it.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Scale');
    // A table's rows are reached with Tab: the name links.
    await navigate(page, `${dashboardUrl}/#/workloads/deployments`);
    await page.waitForSelector('table[data-resource="deployments"] tbody tr a');
    await page.focus('#namespace');
    let reached = false;
    for (let i = 0; i < 20 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.closest('table[data-resource="deployments"] tbody') !== null && document.activeElement?.textContent === 'web');
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#detail-title');
    expect(await page.$eval('#detail-title', (h) => h.textContent)).toContain('web');
    await shot('deployment-detail');
  });
  it('draws CPU and memory sparklines from the metrics API, an event timeline and the port-forward command', async () => {
    await navigate(page, `${dashboardUrl}/#/overview`);
    // The metrics server has a CPU rate after its second reading of the node (15 s apart), and the
    // dashboard reads it every 5 s: under load the first one comes after 20 s (CI on 4908219).
    await until('a node CPU sparkline', () => document.querySelector('section[aria-label="Nodes"] svg.sparkline[aria-label^="CPU of "]'), undefined, page, METRICS_WAIT_MS);
    const nodeSpark = await page.$eval('section[aria-label="Nodes"] svg.sparkline[aria-label^="CPU of "]', (e) => e.getAttribute('aria-label'));
    expect(nodeSpark).toMatch(/^CPU of \S+: (\d+m CPU|[\d.]+ cores) now; \d+ samples?/);
    expect(await page.$eval('section[aria-label="Nodes"] svg.sparkline[aria-label^="Memory of "]', (e) => e.getAttribute('aria-label'))).toMatch(/: \d+ MiB now|: [\d.]+ GiB now/);
    const pod = (await kubectl(['-n', 'team', 'get', 'pods', '-l', 'app=web', '--field-selector=status.phase=Running', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
    await navigate(page, `${dashboardUrl}/#/o/core/v1/pods/team/${pod}`);
    await until('a pod memory sparkline', () => document.querySelector('section.usage svg.sparkline[aria-label^="Memory of "]'), undefined, page, METRICS_WAIT_MS);
    // The pod's events (scheduled, started...) on a time line beside their table.
    await until('an event timeline', () => Number(document.querySelector('svg.timeline')?.getAttribute('data-events')) >= 1);
    expect(await page.$eval('svg.timeline', (e) => e.getAttribute('aria-label'))).toMatch(/^Timeline of \d+ events? \(\d+ warnings?\)/);
    expect(await page.$eval('.port-forward input', (e: { value: string }) => e.value)).toBe(`kubectl -n team port-forward pod/${pod} 8080:8080`);
    await shot('pod-pictures');
  }, 3 * METRICS_WAIT_MS);

  it('drains a node: cordons it, evicts through the Eviction subresource and shows the evictions a disruption budget refuses', async () => {
    // Every web pod running: a pending pod may always be evicted, whatever the budget says.
    await kubectl(['-n', 'team', 'rollout', 'status', 'deployment/web', '--timeout=60s']);
    await kubectl(['apply', '-f', '-'], BUDGET);
    await kubectl(['apply', '-f', '-'], SOLO);
    await kubectl(['-n', 'team', 'wait', '--for=condition=Ready', 'pod/solo', '--timeout=60s']);
    const node = (await kubectl(['-n', 'team', 'get', 'pod', 'solo', '-o', 'jsonpath={.spec.nodeName}'])).trim();
    const webPods = (await kubectl(['-n', 'team', 'get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[*].metadata.name}'])).trim().split(/\s+/);
    await navigate(page, `${dashboardUrl}/#/o/core/v1/nodes/_/${node}`);
    await page.waitForSelector('.actions[data-access="checked"]');
    await page.click('xpath/.//div[@role="toolbar"]//button[text()="Drain"]');
    await page.waitForSelector('dialog[open] .drain table tbody tr');
    await page.click('xpath/.//dialog[@open]//button[text()="Drain"]');
    await until('every eviction answered', () => document.querySelectorAll('dialog[open] .drain .outcome-evict').length === 0 && document.querySelector('dialog[open] .drain button')?.textContent === 'Close');
    const outcomes: Record<string, string[]> = Object.fromEntries(
      await page.$$eval('dialog[open] .drain tbody tr', (rows) => rows.map((r: any) => [r.cells[0].textContent, [r.cells[1].textContent, r.cells[2].textContent]])),
    );
    expect(outcomes['team/solo']).toEqual(['evicted', 'eviction accepted']);
    for (const name of webPods) expect(outcomes[`team/${name}`]).toEqual(['refused', expect.stringContaining("disruption budget")]);
    await shot('node-drain');
    await page.keyboard.press('Escape');
    await until('the summary', (n: number) => new RegExp(`^Cordoned \\S+; \\d+ evicted, ${n} refused, 0 failed`).test(document.querySelector('[role="status"]')?.textContent ?? ''), webPods.length);
    expect(await kubectl(['get', 'node', node, '-o', 'jsonpath={.spec.unschedulable}'])).toBe('true');
    expect(await kubectl(['-n', 'team', 'get', 'pods', '-l', 'app=web', '-o', 'name'])).toContain(webPods[0]);
    // The Eviction subresource deleted the unmanaged pod (it is gone or terminating).
    expect(await kubectl(['-n', 'team', 'get', 'pod', 'solo', '--ignore-not-found', '-o', 'jsonpath={.metadata.name}/{.metadata.deletionTimestamp}'])).toMatch(/^$|^solo\/\d{4}-/);
    await page.click('xpath/.//div[@role="toolbar"]//button[text()="Uncordon"]');
    await until('uncordoned', () => document.querySelector('[role="status"]')?.textContent === 'Uncordoned.');
    expect(await kubectl(['get', 'node', node, '-o', 'jsonpath={.spec.unschedulable}'])).toBe('');
  });
});
