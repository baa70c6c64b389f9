import { JobManager } from '../src/cluster/job-manager.js';
import { TaskManager } from '../src/cluster/task-manager.js';
import { Configuration } from '../src/config/configuration.js';
import { bundleJob } from '../src/cli/job-loader.js';
import type { JobExecutor } from '../src/runtime/job-executor.js';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, WatermarkStrategy } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { DiscardingSink } from '../src/connectors/discarding-sink.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { RestServer } from '../src/rest/rest-server.js';
import { dashboardAssetsDir } from '../src/dashboard/static-assets.js';

/**
 * The dashboard in a real headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against a running job. Screenshots go to .cache/screenshots/; with
 * SLUICE_UPDATE_DOCS_SCREENSHOTS=1 the checkpoint page is also written to
 * docs/images/checkpoints.png (the README's picture).
 */

const CANDIDATES = [process.env.SLUICE_CHROMIUM, process.env.CHROME_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
const findChromium = (): string | undefined => CANDIDATES.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
/** No Chromium: as root on Debian, `npm test` brings Debian's package itself (as .ci/run does). */
function installChromium(): void {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return;
  process.stderr.write('[dashboard test] no Chromium found: installing Debian\'s chromium package (apt-get install -y chromium)\n');
  try {
    execFileSync('apt-get', ['update', '-q'], { stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '-q', 'chromium'], { stdio: 'ignore', timeout: 600_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } catch (e) {
    process.stderr.write(`[dashboard test] installing chromium failed: ${(e as Error).message}\n`);
  }
}
let chromiumPath = findChromium();
if (chromiumPath === undefined) {
  installChromium();
  chromiumPath = findChromium();
}
if (chromiumPath === undefined) {
  process.stderr.write(
    `[dashboard test] SKIPPED: no Chromium found (looked at SLUICE_CHROMIUM, CHROME_PATH, ${CANDIDATES.slice(2).join(', ')}). ` +
      'Install Debian\'s package as root (apt-get install -y chromium; .ci/run does it) or set SLUICE_CHROMIUM=/path/to/chrome.\n',
  );
}

const TOKEN = 'dashboard-token';
const SCREENSHOTS = join(process.cwd(), '.cache', 'screenshots');
let browser: Browser;
let page: Page;
let server: RestServer;
let base: string;
let executor: LocalExecutor;
let done: Promise<unknown>;
let savepointDir: string;
const pageErrors: string[] = [];

async function shot(name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage });
}

describe.skipIf(chromiumPath === undefined)('web dashboard in headless Chromium', () => {
  beforeAll(async () => {
    if (dashboardAssetsDir() === undefined) throw new Error('the dashboard is not built: run npm run build (npm test does it first)');
    mkdirSync(SCREENSHOTS, { recursive: true });
    savepointDir = mkdtempSync(join(tmpdir(), 'sluice-dashboard-sp-'));
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 400 });
    env
      .fromSource(numberSource({ eventsPerSecond: 50_000 }), WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => Date.UTC(2026, 0, 1) + n), 'numbers')
      .map((n) => n % 5000)
      .name('bucket')
      .keyBy((n) => n)
      .reduce((a, b) => a + b)
      .name('sum per bucket')
      .sinkTo(FaultPlan.slowSink(new DiscardingSink<number>(), { everyRecords: 500, delayMs: 1 }))
      .name('slow sink')
      .setParallelism(1);
    executor = new LocalExecutor(env.getJobGraph('dashboard demo'), env.config, { log: () => {} });
    server = new RestServer({ port: 0, authToken: TOKEN });
    base = await server.start();
    server.register(executor);
    done = executor.run().catch(() => {});
    browser = await chromium.launch({
      executablePath: chromiumPath!,
      // Playwright starts Chromium with a fresh temporary profile (--user-data-dir) each launch.
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    // Scripts run in the page (DOM types are not in this project's lib): as strings.
    await context.addInitScript({ content: `sessionStorage.setItem('sluice.rest.token', ${JSON.stringify(TOKEN)});` });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.setDefaultTimeout(20_000);
    while (executor.status !== 'RUNNING') await new Promise((r) => setTimeout(r, 10));
  });

  afterAll(async () => {
    await browser?.close();
    executor?.cancel();
    await done;
    await server?.stop(0);
    if (savepointDir !== undefined) rmSync(savepointDir, { recursive: true, force: true });
  });

  it('serves the page without a token and asks for one when the API needs it', async () => {
    const anonymous = await browser.newPage();
    try {
      const res = await anonymous.goto(`${base}/`);
      expect(res?.status()).toBe(200);
      await anonymous.getByText('This REST API needs a token').waitFor();
    } finally {
      await anonymous.close();
    }
  });

  it('shows the cluster overview and the running job', async () => {
    await page.goto(`${base}/#/overview`);
    await page.locator('[data-testid=card-running] .card-value', { hasText: '1' }).waitFor();
    await page.locator('[data-testid=job-table] tr', { hasText: 'dashboard demo' }).first().waitFor();
    await shot('overview');
  });

  it('renders the job graph as SVG with a node per vertex and live rates', async () => {
    await page.goto(`${base}/#/job/${executor.jobId}/overview`);
    const vertices = page.locator('[data-testid=job-graph] g.vertex');
    await expect.poll(() => vertices.count(), { timeout: 20_000 }).toBe(executor.jobGraph.vertices.length);
    const ids = await vertices.evaluateAll((els) => els.map((e) => e.getAttribute('data-vertex-id')));
    expect(ids).toEqual(executor.jobGraph.vertices.map((v) => String(v.id).padStart(32, '0')));
    expect(await page.locator('[data-testid=job-graph] g.edge').count()).toBe(executor.jobGraph.edges.length);
    // Records per second arrive once the meters have two samples.
    await expect.poll(() => vertices.first().locator('[data-testid=vertex-rates]').textContent(), { timeout: 20_000 }).toMatch(/Out [\d.]+[kM]?\/s/);
    await vertices.first().click();
    await page.locator('[data-testid=subtask-table] tbody tr').nth(1).waitFor();
    await shot('job-graph');
    // A source has no input watermark; the subtasks after it show the watermark its records carry.
    await expect.poll(() => page.locator('[data-testid=subtask-watermark]').allTextContents(), { timeout: 10_000 }).toEqual(['No Watermark', 'No Watermark']);
    await vertices.nth(1).click();
    await expect.poll(async () => (await page.locator('[data-testid=subtask-watermark]').allTextContents()).every((t) => /^20\d\d-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/.test(t)), { timeout: 10_000 }).toBe(true);
  });

  it('triggers a savepoint from the page (after confirming) and shows it in the checkpoint history', async () => {
    await page.goto(`${base}/#/job/${executor.jobId}/checkpoints`);
    await page.locator('[data-testid=checkpoint-history] tbody tr').first().waitFor();
    await page.getByTestId('trigger-savepoint').click();
    const dialog = page.getByTestId('confirm-dialog');
    await dialog.waitFor();
    await page.getByTestId('savepoint-dir').fill(savepointDir);
    await page.getByTestId('dialog-confirm').click();
    await page.getByTestId('toast-success').filter({ hasText: 'Savepoint completed' }).waitFor();
    const row = page.locator('[data-testid=checkpoint-history] tr[data-checkpoint-type=SAVEPOINT]').first();
    await row.waitFor();
    expect(await row.textContent()).toContain(savepointDir);
    // Per-subtask detail of the savepoint: alignment and in-flight data per subtask.
    await row.click();
    await page.locator('[data-testid=checkpoint-vertex]').first().click();
    await page.locator('[data-testid=checkpoint-subtasks] tbody tr').first().waitFor();
    // The detail stays open while new checkpoints arrive and the page refreshes (every 2 s).
    await page.waitForTimeout(2100);
    expect(await page.locator('[data-testid=checkpoint-subtasks] tbody tr').count()).toBe(3);
    await page.locator('[data-testid=chart-duration] circle.highlight').first().waitFor({ state: 'attached' });
    await page.locator('[data-testid=checkpoint-config]').waitFor();
    for (const close of await page.locator('.toast button').all()) await close.click();
    await page.evaluate(`window.scrollTo(0, 0); for (const e of document.querySelectorAll('.section')) e.scrollLeft = 0;`);
    await shot('checkpoints');
    await shot('checkpoints-top', false);
    if (process.env.SLUICE_UPDATE_DOCS_SCREENSHOTS === '1') {
      await page.screenshot({ path: join(process.cwd(), 'docs', 'images', 'checkpoints.png'), fullPage: false });
    }
    const stats = (await (await fetch(`${base}/jobs/${executor.jobId}/checkpoints`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { latest: { savepoint: { external_path: string } | null } };
    expect(stats.latest.savepoint?.external_path.startsWith(savepointDir)).toBe(true);
  });

  it('shows exceptions and TaskManagers', async () => {
    await page.goto(`${base}/#/job/${executor.jobId}/exceptions`);
    await page.locator('[data-testid=num-restarts] .card-value', { hasText: '0' }).waitFor();
    await page.goto(`${base}/#/taskmanagers`);
    await page.locator('[data-testid=taskmanager-table] tbody tr').first().waitFor();
    await shot('taskmanagers');
  });

  it('cancels the job only after confirmation', async () => {
    await page.goto(`${base}/#/job/${executor.jobId}/overview`);
    await page.getByTestId('cancel-job').click();
    await page.getByTestId('dialog-cancel').click();
    await page.getByTestId('confirm-dialog').waitFor({ state: 'detached' });
    expect(executor.status).toBe('RUNNING');
    await page.getByTestId('cancel-job').click();
    await page.getByTestId('dialog-confirm').click();
    await expect.poll(() => executor.status, { timeout: 20_000 }).toBe('CANCELED');
    await page.locator('.job-header .badge', { hasText: 'CANCELED' }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(chromiumPath === undefined)('web dashboard of a cluster (JobManager and two TaskManagers over TCP)', () => {
  let jm: JobManager;
  const tms: TaskManager[] = [];
  let cbrowser: Browser;
  let job: JobExecutor;
  let jobDone: Promise<unknown>;
  const dirs: string[] = [];

  beforeAll(async () => {
    jm = new JobManager({ config: new Configuration([['jobmanager.rpc.port', 0], ['rest.port', 0]]), log: () => {} });
    await jm.start();
    for (let i = 0; i < 2; i++) {
      const tm = new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: jm.rpcPort, slots: 1, host: '127.0.0.1', id: `dash-tm-${i}`, log: () => {} });
      await tm.start();
      tms.push(tm);
    }
    const tmp = (): string => {
      const d = mkdtempSync(join(tmpdir(), 'sluice-dashboard-cluster-'));
      dirs.push(d);
      return d;
    };
    const bundle = await bundleJob(join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts'), join(tmp(), 'job.mjs'));
    job = await jm.submit({
      bundle,
      config: [
        ['parallelism.default', 2],
        ['execution.checkpointing.interval', 300],
        ['execution.checkpointing.dir', tmp()],
      ],
      args: [tmp(), '10000000', '7', '2000'],
      name: 'cluster demo',
    });
    jobDone = job.run().catch(() => {});
    cbrowser = await chromium.launch({
      executablePath: chromiumPath!,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    while (job.status !== 'RUNNING') await new Promise((r) => setTimeout(r, 10));
  });

  afterAll(async () => {
    await cbrowser?.close();
    job?.cancel();
    await jobDone;
    for (const tm of tms) await tm.stop();
    await jm?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('lists both TaskManagers, draws the job graph, and shows completed checkpoints', async () => {
    const p = await cbrowser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(e.message));
    p.setDefaultTimeout(20_000);
    await p.goto(`${jm.restUrl}/#/taskmanagers`);
    await expect.poll(() => p.locator('[data-testid=taskmanager-table] tbody tr').count(), { timeout: 20_000 }).toBe(2);
    expect(await p.locator('[data-testid=taskmanager-table]').textContent()).toContain('dash-tm-1');
    await p.goto(`${jm.restUrl}/#/job/${job.jobId}/overview`);
    const vertices = p.locator('[data-testid=job-graph] g.vertex');
    await expect.poll(() => vertices.count(), { timeout: 20_000 }).toBe(job.jobGraph.vertices.length);
    await p.goto(`${jm.restUrl}/#/job/${job.jobId}/checkpoints`);
    await p.locator('[data-testid=checkpoint-history] tbody tr').first().waitFor();
    await p.screenshot({ path: join(SCREENSHOTS, 'cluster-checkpoints.png'), fullPage: true });
    expect(errors).toEqual([]);
    await p.close();
  });

  it('a job that lost a TaskManager shows what it waits for, its restart and last failure, and its vertices not running; then runs again', async () => {
    const p = await cbrowser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(e.message));
    p.setDefaultTimeout(20_000);
    // One of the two one-slot TaskManagers goes: the job (parallelism 2) restarts and waits for a slot.
    await tms.pop()!.stop();
    await p.goto(`${jm.restUrl}/#/job/${job.jobId}/overview`);
    const waiting = p.locator('[data-testid=waiting-for-slots]');
    await waiting.waitFor();
    expect(await waiting.textContent()).toMatch(/^Waiting for 2 slots, 1 available, gives up at \d\d:\d\d:\d\d \(slot\.request\.timeout\)$/);
    expect(await p.locator('[data-testid=job-restarts]').textContent()).toBe('1 restart');
    expect(await p.locator('[data-testid=last-failure]').textContent()).toMatch(/^Last failure .*: TaskManager dash-tm-1 .* was lost/);
    await expect.poll(() => p.locator('[data-testid=vertex-table] tbody td:nth-child(2) .badge').allTextContents()).toEqual(job.jobGraph.vertices.map(() => 'CREATED'));
    await p.screenshot({ path: join(SCREENSHOTS, 'cluster-waiting-for-slots.png'), fullPage: true });
    await p.goto(`${jm.restUrl}/#/jobs`);
    const row = p.locator('[data-testid=job-table] tbody tr', { hasText: job.jobId });
    expect(await row.locator('[data-testid=job-restarts]').textContent()).toBe('1');
    await row.locator('[data-testid=waiting-for-slots]').waitFor();
    // A TaskManager comes back: the job runs again, the note goes, the restart and failure stay.
    const tm = new TaskManager({ jobManagerHost: '127.0.0.1', jobManagerPort: jm.rpcPort, slots: 1, host: '127.0.0.1', id: 'dash-tm-2', log: () => {} });
    await tm.start();
    tms.push(tm);
    await p.goto(`${jm.restUrl}/#/job/${job.jobId}/overview`);
    await expect.poll(() => p.locator('[data-testid=vertex-table] tbody td:nth-child(2) .badge').allTextContents(), { timeout: 30_000 }).toEqual(job.jobGraph.vertices.map(() => 'RUNNING'));
    expect(await p.locator('[data-testid=waiting-for-slots]').count()).toBe(0);
    expect(await p.locator('[data-testid=last-failure]').count()).toBe(1);
    expect(errors).toEqual([]);
    await p.close();
  });
});
