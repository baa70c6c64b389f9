// Flink's own clients against a `sluice cluster`: the Java harness in test/flink-compat/ runs
// Flink's RestClusterClient, the `flink` CLI (CliFrontend) and parses every monitoring answer
// into Flink's response classes, once per client version (flink-clients 2.3.0 and 1.20.5). This
// file starts the cluster, submits the jobs the harness works on, runs it, and checks the
// effects in Sluice: jobs stopped and cancelled, a savepoint made by Flink's CLI that
// `sluice run -s` restores with the counts continuing exactly.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleJob } from '../src/cli/job-loader.js';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { ClusterProcesses, jobState, runSluice, sleep } from './support/cluster-processes.js';

const HARNESS = join(import.meta.dirname, 'flink-compat');
const CACHE = join(import.meta.dirname, '..', '.cache', 'flink-compat');
const FIXTURES = join(import.meta.dirname, 'fixtures', 'cluster');
const VERSIONS = [
  { version: '2.3.0', profile: 'flink2' },
  { version: '1.20.5', profile: 'flink1' },
] as const;
const KEYS = 5;

/**
 * Checks that fail by design, per client version: Flink 1.20's JobConfigInfo needs
 * `execution-mode`, which Flink 2.x's parser refuses; Sluice answers in 2.x's shape.
 */
const KNOWN_FAILURES: Readonly<Record<string, readonly string[]>> = {
  '2.3.0': [],
  '1.20.5': ['GET /jobs/:id/config'],
};

const cp = new ClusterProcesses('sluice-flink-compat-');
let rest = '';
let bundle = '';
const log: string[] = [];

function run(cmd: string, args: readonly string[], o: { cwd?: string; timeoutMs: number }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: o.cwd, timeout: o.timeoutMs, maxBuffer: 32 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

/** The harness jar and its class path for one Flink version: built once per content of the harness (offline when the local Maven repository has the jars), then cached. */
async function harness(version: string, profile: string): Promise<{ jar: string; classpath: string }> {
  const hash = createHash('sha256');
  hash.update(readFileSync(join(HARNESS, 'pom.xml')));
  const sources = join(HARNESS, 'src', 'main', 'java', 'sluice', 'flinkcompat');
  for (const f of readdirSync(sources).sort()) hash.update(f).update(readFileSync(join(sources, f)));
  const dir = join(CACHE, `${version}-${hash.digest('hex').slice(0, 16)}`);
  const jar = join(dir, 'flink-compat.jar');
  const cpFile = join(dir, 'classpath.txt');
  if (!existsSync(jar) || !existsSync(cpFile)) {
    const args = ['-q', '-B', `-P${profile}`, 'package'];
    let r = await run('mvn', ['-o', ...args], { cwd: HARNESS, timeoutMs: 300_000 });
    if (r.code !== 0) r = await run('mvn', args, { cwd: HARNESS, timeoutMs: 600_000 });
    if (r.code !== 0) throw new Error(`building the Flink ${version} harness (mvn ${args.join(' ')} in ${HARNESS}) failed:\n${r.stdout}\n${r.stderr}`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(HARNESS, 'target', version, `flink-compat-${version}.jar`), jar);
    writeFileSync(cpFile, readFileSync(join(HARNESS, 'target', version, `classpath-${version}.txt`), 'utf8').trim());
  }
  return { jar, classpath: readFileSync(cpFile, 'utf8') };
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://${rest}${path}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function submit(args: readonly string[], config: [string, string | number][] = []): Promise<string> {
  const r = await call('POST', '/jobs', {
    bundle,
    config: [['parallelism.default', 1], ['execution.checkpointing.interval', 200], ...config],
    args,
    name: 'flink-compat',
  });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.jobid as string;
}

async function untilState(jobId: string, states: readonly string[], timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await jobState(rest, jobId);
    if (states.includes(s)) return s;
    if (Date.now() > deadline) throw new Error(`job ${jobId} is ${s}, not ${states.join('/')}`);
    await sleep(100);
  }
}

/** Until the job completed a checkpoint (the harness reads one's details). */
async function untilCheckpointed(jobId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const c = await call('GET', `/jobs/${jobId}/checkpoints`);
    if (((c.json.counts as { completed?: number } | undefined)?.completed ?? 0) > 0) return;
    await sleep(100);
  }
  throw new Error(`job ${jobId} completed no checkpoint in 30 s`);
}

/** Max count per key in "key:count" lines. */
function maxCounts(lines: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines) {
    const [k, c] = l.split(':');
    m.set(k!, Math.max(m.get(k!) ?? 0, Number(c)));
  }
  return m;
}

beforeAll(async () => {
  rest = (await cp.start(['cluster', 'run', '--taskmanagers', '2', '--slots', '4', '--rpc-port', '0', '--rest-port', '0'], /cluster ready: rpc \S+ rest http:\/\/(\S+)/)).match[1]!;
  bundle = await bundleJob(join(FIXTURES, 'keyed-count-job.ts'), join(cp.tempDir(), 'job.mjs'));
}, 60_000);

afterAll(async () => {
  await cp.cleanUp();
});

describe.each(VERSIONS)("Flink $version's RestClusterClient and flink CLI against a sluice cluster", ({ version, profile }) => {
  it('every check of the harness passes, with its effects in Sluice', { timeout: 600_000 }, async () => {
    const t0 = Date.now();
    const { jar, classpath } = await harness(version, profile);
    const built = Date.now();
    const dir = cp.tempDir();
    const long = (name: string): Promise<string> => submit([join(dir, name), '100000000', String(KEYS), '500']);
    const running = await long('running');
    const drain = await long('drain');
    const cancelCli = await long('cancel-cli');
    const cancelClient = await long('cancel-client');
    const finished = await submit([join(dir, 'finished'), '200', String(KEYS), '10000']);
    const failedBundle = await bundleJob(join(FIXTURES, 'failing-job.ts'), join(dir, 'failing.mjs'));
    const failed = (await call('POST', '/jobs', { bundle: failedBundle, config: [['parallelism.default', 1], ['restart-strategy.type', 'none']], args: ['10'], name: 'flink-compat-failing' })).json.jobid as string;
    for (const j of [running, drain, cancelCli, cancelClient]) await untilState(j, ['RUNNING']);
    await untilState(finished, ['FINISHED']);
    await untilState(failed, ['FAILED']);
    await untilCheckpointed(running);

    const h = await run('java', ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-cp', `${jar}:${classpath}`, 'sluice.flinkcompat.Main', `rest=${rest}`, `running=${running}`, `drain=${drain}`, `cancelCli=${cancelCli}`, `cancelClient=${cancelClient}`, `failed=${failed}`, `finished=${finished}`, `savepointDir=${join(dir, 'savepoints')}`], { timeoutMs: 300_000 });
    const lines = h.stdout.split('\n');
    log.push(`Flink ${version}: harness built in ${built - t0} ms, ran in ${Date.now() - built} ms`, ...lines.filter((l) => !l.startsWith('PASS')));
    const passed = lines.filter((l) => l.startsWith('PASS '));
    const failures = lines.filter((l) => l.startsWith('FAIL ')).map((l) => l.slice(5));
    const unexpected = failures.filter((f) => !KNOWN_FAILURES[version]!.some((k) => f.startsWith(`${k} `)));
    expect(unexpected, `${h.stdout}\n${h.stderr.split('\n').slice(-30).join('\n')}`).toEqual([]);
    expect(lines.some((l) => l.startsWith('SUMMARY ')), h.stderr).toBe(true);
    expect(h.code).toBe(failures.length === 0 ? 0 : 1);
    // The harness's checks, by name: every client call and CLI command ran.
    for (const name of ['client.listJobs', 'client.getJobStatus', 'client.requestJobResult.failed', 'client.triggerSavepoint.NATIVE', 'client.stopWithSavepoint.drain', 'cli.list -a', 'cli.savepoint -d', 'cli.checkpoint --full', 'cli.stop --savepointPath', 'cli.cancel', 'client.cancel']) {
      expect(passed.some((l) => l.startsWith(`PASS ${name} `)), name).toBe(true);
    }
    console.log(`Flink ${version}: ${passed.length} passed, ${failures.length} failed (known: ${KNOWN_FAILURES[version]!.join(', ') || 'none'})`);

    // The effects, as Sluice sees them.
    expect(await jobState(rest, running)).toBe('FINISHED');
    expect(await jobState(rest, drain)).toBe('FINISHED');
    expect(await jobState(rest, cancelCli)).toBe('CANCELED');
    expect(await jobState(rest, cancelClient)).toBe('CANCELED');
    const stopSavepoint = lines.find((l) => l.startsWith('INFO stop-savepoint '))?.split(' ')[2];
    expect(stopSavepoint).toBeDefined();
    expect(existsSync(join(stopSavepoint!.replace(/^file:(\/\/)?/, ''), '_metadata'))).toBe(true);

    // The savepoint Flink's `flink stop --savepointPath` made restores with `sluice run -s`, and
    // each key's count goes on from where the stopped job left it: together the two outputs
    // hold each count 1..n of each key exactly once.
    const before = await readCommittedLines(join(dir, 'running'));
    const stoppedAt = maxCounts(before);
    expect(stoppedAt.size).toBe(KEYS);
    const after = join(dir, 'restored');
    const r = await runSluice(['run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', '1', '-s', stopSavepoint!, '-D', 'execution.checkpointing.interval=200', join(FIXTURES, 'keyed-count-job.ts'), after, '100000000', String(KEYS), '500']);
    const restored = r.stdout.trim().split('\n').at(-1)?.trim() ?? '';
    expect(restored, r.stderr).toMatch(/^[0-9a-f]{32}$/);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && maxCounts(await readCommittedLines(after)).size < KEYS) await sleep(100);
    await call('PATCH', `/jobs/${restored}?mode=cancel`);
    await untilState(restored, ['CANCELED']);
    const continued = await readCommittedLines(after);
    const firstAfter = new Map<string, number>();
    for (const l of continued) {
      const [k, c] = l.split(':');
      firstAfter.set(k!, Math.min(firstAfter.get(k!) ?? Infinity, Number(c)));
    }
    for (const [k, n] of stoppedAt) expect(firstAfter.get(k), `key ${k}: first count after the restore`).toBe(n + 1);
    const byKey = new Map<string, number[]>();
    for (const l of [...before, ...continued]) {
      const [k, c] = l.split(':');
      byKey.set(k!, [...(byKey.get(k!) ?? []), Number(c)]);
    }
    for (const [k, counts] of byKey) {
      const sorted = counts.sort((a, b) => a - b);
      expect(sorted, `key ${k}: each count once`).toEqual(Array.from({ length: sorted.length }, (_, i) => i + 1));
    }
  });
});

afterAll(() => {
  if (log.length > 0) console.log(log.join('\n'));
});
