/**
 * docs/getting-started.md, followed as a reader follows it: every `sh` block run in order in
 * one bash session (`set -euo pipefail`) that starts in an empty directory, every
 * `file=<path>` block written where the session is at that point (test/support/doc-runner.ts).
 * The only blocks not run are the `sh prerequisite` ones (a container engine, a Kafka
 * download), all in "Before you start", and the `text` blocks of output; the test checks
 * both. What the test does in their place, and the one command it changes:
 *
 * - Kafka: the broker of the kafka project's globalSetup, with a topic of 4 partitions of
 *   the test's own, given to the guide's jobs as ORDERS_TOPIC (with KAFKA_BOOTSTRAP).
 * - PostgreSQL: a throwaway cluster with max_prepared_transactions = 20 (the machine's server
 *   has 0), given as PGHOST, PGPORT, PGUSER and PGDATABASE, which the guide's psql and job use.
 * - Ports: other tests may hold 8081 and 6123, so $SLUICE_CONF_DIR/config.yaml gives free
 *   ones (rest.port, jobmanager.rpc.port), which every `sluice` command of the guide reads;
 *   SLUICE_CLUSTER_DIR keeps the cluster's pid and log apart.
 * - Sluice: the repository packed with `npm pack` (dist/ as built by `npm test`'s pretest),
 *   and the guide's `npx sluice init orders-totals` run as
 *   `npx --yes --package=<tarball> sluice init orders-totals` (the form the guide gives for a
 *   clone), as the package is not taken from the npm registry.
 *
 * Then it checks what the guide claims against a reference computed here from the same
 * 1,200 orders: the table holds every total of minutes 00:00-00:03 once and right (nothing lost
 * or duplicated across the crash, the savepoints, the rescale and the cluster), minute 00:04 is
 * in the last savepoint's open windows with all its orders, the topic holds each order once,
 * and no prepared transaction is left.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, uniqueTopic } from './services/kafka-test-client.js';
import { preparedTransactionsServer, sql, type PostgresServer } from './services/postgres-cluster.js';
import { headingAt, parseDoc, runScript, shellScript, type DocBlock, type DocRun } from './support/doc-runner.js';

const brokers = inject('kafka');
const repo = resolve(import.meta.dirname, '..');
const GUIDE = 'docs/getting-started.md';
const run = promisify(execFile);

/** The guide's orders (src/produce-orders.ts), written again here: the reference does not take them from the guide. */
const ORDERS = 1_200;
const START = Date.parse('2026-01-01T00:00:00Z');
const MINUTE = 60_000;
function order(i: number): { orderId: number; customer: string; amountCents: number; time: number } {
  return { orderId: i, customer: `customer-${(i * 7) % 5}`, amountCents: 100 + ((i * 37) % 900), time: START + i * 250 };
}

/** Per minute and customer: orders and cents. */
function reference(): Map<string, { orders: number; totalCents: number }> {
  const totals = new Map<string, { orders: number; totalCents: number }>();
  for (let i = 0; i < ORDERS; i++) {
    const o = order(i);
    const key = `${Math.floor((o.time - START) / MINUTE)}|${o.customer}`;
    const t = totals.get(key) ?? { orders: 0, totalCents: 0 };
    totals.set(key, { orders: t.orders + 1, totalCents: t.totalCents + o.amountCents });
  }
  return totals;
}

/**
 * The minutes the watermark has closed once every order is read: those ending at least 5 s
 * (the bounded out-of-orderness) before the oldest of the partitions' newest orders. Each of
 * the 4 partitions gets one of the last 4 orders at least (they are written round-robin), so
 * that is 00:04:59 at the earliest: minutes 0-3 close, minute 4 (ending 00:05:00) stays open.
 */
const CLOSED_MINUTES = 4;

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolvePort(port));
    });
  });
}

const work = mkdtempSync(join(tmpdir(), 'sluice-getting-started-'));
const home = join(work, 'home'); // the empty directory the guide starts in
const project = join(home, 'orders-totals');
const clusterDir = join(work, 'cluster');
let server: PostgresServer | undefined;
let tarball = '';
let topic = '';
let confDir = '';

beforeAll(async () => {
  mkdirSync(home);
  topic = uniqueTopic('getting-started-orders');
  const [pg, packed] = await Promise.all([
    preparedTransactionsServer(),
    // dist/ was built by `npm test`'s pretest; --ignore-scripts keeps prepare from building it again under running tests.
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: repo, maxBuffer: 64 << 20 }),
    createTopics(brokers.bootstrap, [{ name: topic, partitions: 4 }]),
  ]);
  server = pg;
  tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  confDir = join(work, 'conf');
  mkdirSync(confDir);
  writeFileSync(join(confDir, 'config.yaml'), `rest.port: ${await freePort()}\njobmanager.rpc.port: ${await freePort()}\n`);
  console.log(`getting started: PostgreSQL ${server.description}; Kafka ${brokers.bootstrap} topic ${topic}; ${tarball}`);
}, 120_000);

afterAll(async () => {
  if (existsSync(join(clusterDir, 'cluster.json'))) {
    await run(process.execPath, [join(project, 'node_modules', '.bin', 'sluice'), 'cluster', 'stop'], { cwd: project, env: { ...process.env, SLUICE_CLUSTER_DIR: clusterDir } }).catch(() => {});
  }
  await server?.stop();
  if (process.env.SLUICE_KEEP_GETTING_STARTED === undefined) rmSync(work, { recursive: true, force: true });
  else console.log(`getting started: kept ${work}`);
});

function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return `(${file} does not exist)`;
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

/** How long each block took, for the log: `line  seconds  first line`. */
function timings(blocks: readonly DocBlock[], r: DocRun): string {
  const end = (r.started[0]?.atMs ?? 0) + r.durationMs;
  return r.started
    .map((s, k) => {
      const next = r.started[k + 1]?.atMs ?? end;
      const b = blocks.find((x) => x.line === s.line)!;
      return `${String(s.line).padStart(4)}  ${((next - s.atMs) / 1000).toFixed(1).padStart(6)} s  ${b.file ?? b.code.split('\n')[0]}`;
    })
    .join('\n');
}

describe('docs/getting-started.md', () => {
  it('runs from an empty directory to exactly-once totals in PostgreSQL, through a crash, savepoints, a rescale and a cluster', { timeout: 15 * 60_000 }, async () => {
    const blocks = parseDoc(readFileSync(join(repo, GUIDE), 'utf8'), GUIDE);

    // Only prerequisites (and output) are skipped, and every prerequisite is in "Before you start".
    const prerequisites = blocks.filter((b) => b.kind === 'prerequisite');
    expect(prerequisites.length).toBeGreaterThan(0);
    expect(prerequisites.filter((b) => headingAt(b, 2) !== 'Before you start').map((b) => b.line)).toEqual([]);
    expect(blocks.filter((b) => b.kind === 'shell').length).toBeGreaterThan(10);

    const script = shellScript(blocks, GUIDE, [{ from: 'npx sluice init orders-totals', to: `npx --yes --package=${tarball} sluice init orders-totals` }]);
    const c = server!.connection;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // npm, npx and the project's node run by the Node.js that runs the suite.
      PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      KAFKA_BOOTSTRAP: brokers.bootstrap,
      ORDERS_TOPIC: topic,
      PGHOST: c.host!,
      PGPORT: String(c.port!),
      PGUSER: c.user!,
      PGDATABASE: c.database!,
      SLUICE_CONF_DIR: confDir,
      SLUICE_CLUSTER_DIR: clusterDir,
    };
    for (const k of ['NODE_OPTIONS', 'PGPASSWORD', 'PGSERVICE', 'DATABASE_URL', 'SLUICE_JOBMANAGER', 'SLUICE_REST_TOKEN', 'SLUICE_CLUSTER_SECRET']) delete env[k];

    // A job of the guide that fails in the background would leave a waiting loop waiting for ever.
    const failedJob = (): string | undefined => {
      for (const log of ['totals.log', 'producer.log']) {
        const file = join(project, log);
        const failed = existsSync(file) ? /^Job [0-9a-f]{32} failed.*$/m.exec(readFileSync(file, 'utf8')) : null;
        if (failed !== null) return `${log}: ${failed[0]}`;
      }
      return undefined;
    };
    const r = await runScript(script, { cwd: home, env, timeoutMs: 12 * 60_000, workDir: work, abortWhen: failedJob });
    const report = [
      `exit ${r.code}${r.timedOut ? ' (timed out)' : ''}${r.aborted === undefined ? '' : ` (ended: ${r.aborted})`} after ${(r.durationMs / 1000).toFixed(0)} s; failed at ${GUIDE}:${r.failedLine ?? '-'}`,
      `blocks (line, time, start):\n${timings(blocks, r)}`,
    ].join('\n');
    const kill = r.started.find((s) => blocks.find((b) => b.line === s.line)!.code.includes('kill -9'));
    const producerLog = join(project, 'producer.log');
    if (kill !== undefined && existsSync(producerLog)) {
      // Not asserted (it depends on the machine's speed): whether orders were still coming when the job was killed.
      const producerEnd = statSync(producerLog).mtimeMs;
      console.log(`getting started: the kill -9 came ${(Math.abs(producerEnd - kill.atMs) / 1000).toFixed(1)} s ${producerEnd > kill.atMs ? 'before' : 'after (!)'} the producer's end`);
    }
    console.log(`getting started: ${report}`);
    const diagnosis = `${report}\n--- session output (end)\n${r.output.slice(-6000)}\n--- totals.log\n${tail(join(project, 'totals.log'))}\n--- producer.log\n${tail(join(project, 'producer.log'))}\n--- cluster.log\n${tail(join(clusterDir, 'cluster.log'))}`;
    expect(r.code, diagnosis).toBe(0);
    // Every block but the prerequisites and the output ran, in order.
    expect(r.started.map((s) => s.line)).toEqual(blocks.filter((b) => b.kind === 'shell' || b.kind === 'file').map((b) => b.line));
    expect(r.leftBehind, `the guide left processes running\n${diagnosis}`).toBe(false);
    expect(existsSync(join(clusterDir, 'cluster.json')), 'the guide stops its cluster').toBe(false);

    // Step 1 and 2: the starter's test passed, and its job printed 45 totals.
    expect(r.output).toMatch(/(?:#|ℹ) pass 2\b/); // node --test: TAP on Node 22 when piped, the spec reporter on 24 and later
    expect(r.output).toMatch(/(?:#|ℹ) fail 0\b/);
    expect(r.output.split('\n').filter((l) => l.startsWith('{"customer":')).length).toBe(45);
    // Step 5, 7 and 8: the runs restored what the guide says.
    const totalsLog = readFileSync(join(project, 'totals.log'), 'utf8');
    expect(totalsLog, diagnosis).toMatch(/^Resuming from the newest checkpoint under \.\/checkpoints: \S+\/chk-\d+$/m);
    expect(totalsLog, diagnosis).toMatch(/restoring from savepoint \d+ of job [0-9a-f]{32}/);
    expect(totalsLog, diagnosis).not.toMatch(/^Job [0-9a-f]{32} failed/m);
    expect(readFileSync(join(clusterDir, 'cluster.log'), 'utf8')).toMatch(/restoring from savepoint \d+ of job [0-9a-f]{32}/);

    // The table: every closed minute's totals, once and right; nothing of a minute still open.
    const want = reference();
    const rows = await sql<{ customer: string; minute: number; orders: number; total_cents: string }>(
      server!,
      `SELECT customer, ((extract(epoch FROM window_start) * 1000 - ${START}) / ${MINUTE})::int AS minute, orders, total_cents FROM customer_totals ORDER BY 2, 1`,
    );
    const got = rows.map((x) => `${x.minute}|${x.customer} ${x.orders} ${x.total_cents}`);
    const expected = [...want].filter(([k]) => Number(k.split('|')[0]) < CLOSED_MINUTES).map(([k, t]) => `${k} ${t.orders} ${t.totalCents}`).sort();
    expect(got.sort()).toEqual(expected);
    expect(rows.reduce((n, x) => n + x.orders, 0)).toBe(CLOSED_MINUTES * 240);
    expect(await sql(server!, 'SELECT gid FROM pg_prepared_xacts')).toEqual([]);

    // The last savepoint holds minute 4's windows with all their orders (step 9).
    const savepoints = readdirSync(join(project, 'savepoints'))
      .map((name) => join(project, 'savepoints', name))
      .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
    expect(savepoints.length).toBe(4); // step 6, step 7, step 8 and step 9
    const inspected = await run(process.execPath, [join(project, 'node_modules', '.bin', 'sluice'), 'savepoint', 'inspect', '--json', '--samples', '20', '--operator', 'totals-per-customer', savepoints.at(-1)!], { cwd: project, env, maxBuffer: 16 << 20 });
    const snapshot = JSON.parse(inspected.stdout) as { operators: { keyedState: { states: { samples: { key: string; namespace: number; value: { orders: number; totalCents: number } }[] }[] } }[] };
    const open = snapshot.operators[0]!.keyedState.states.flatMap((s) => s.samples).map((s) => `${(s.namespace - START) / MINUTE}|${s.key} ${s.value.orders} ${s.value.totalCents}`);
    expect(open.sort()).toEqual([...want].filter(([k]) => Number(k.split('|')[0]) === CLOSED_MINUTES).map(([k, t]) => `${k} ${t.orders} ${t.totalCents}`).sort());

    // The topic: each of the 1,200 orders once (read_committed, by Kafka's own console consumer).
    const values = await readTopicWithJavaConsumer(brokers.bootstrap, topic);
    const ids = values.map((v) => (JSON.parse(v) as { orderId: number }).orderId).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: ORDERS }, (_, i) => i));
    for (const v of values) {
      const o = JSON.parse(v) as ReturnType<typeof order>;
      expect(o).toEqual(order(o.orderId));
    }
  });
});
