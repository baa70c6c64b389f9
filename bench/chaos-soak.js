// Chaos soak (npm run soak): a keyed exactly-once job on a cluster of real processes, round
// after round, while processes are killed with SIGKILL or frozen with SIGSTOP past the
// heartbeat timeout and thawed again, at seeded random moments. Two topologies alternate:
//   local       `sluice cluster run` (the JobManager and the TaskManager processes it starts
//               again when they die); faults: a TaskManager killed or frozen
//   standalone  `sluice jobmanager` and `sluice taskmanager` processes the soak starts itself;
//               faults: a TaskManager killed (started again after a while) or frozen, and the
//               JobManager killed (SIGKILL) or stopped (SIGTERM: it suspends the job) and started again on its ports (it takes the job back from
//               the high-availability directory; the TaskManagers register again)
// In both, a fault may also be a rescale: the job is stopped with a savepoint (`sluice stop`)
// and resumed from it at the other parallelism (`sluice run -s -p`, 2 -> 1 or 1 -> 2), writing
// on into the same output directory.
// Every round compares the job's committed output
// with an independent reference and counts duplicates, losses and lines that should not be
// there; a round that differs, or a job that does not finish, prints the seed and variant
// that reproduce it and makes the soak exit with 1.
//
// The suite runs a short seeded version of this (test/cluster-failover.test.ts: five kills,
// two variants, and a stop-with-savepoint resumed at parallelism 1 between kills); this is the
// long one, for before a release or after touching recovery.
//
// usage: node bench/chaos-soak.js [--rounds N] [--minutes M] [--seed S] [--variant NAME] [--topology local|standalone]
//   --rounds    rounds to run (default 8; with --minutes, at most this many)
//   --minutes   stop starting rounds after this long
//   --seed      the first round's seed (round r uses seed + r); default: from the clock
//   --variant   run only this variant (see VARIANTS); default: round r runs variant r mod n
//   --topology  run only this topology; default: they alternate after every pass over the variants
import { spawn, execFile } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readCommittedLines } from '../dist/connectors/file/exactly-once-file-sink.js';
import { seededRandom } from '../dist/testing/seeded-random.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'sluice.js');
const JOB = join(here, '..', 'test', 'fixtures', 'cluster', 'keyed-count-job.ts');
const TASK_MANAGERS = 2;
const HEARTBEAT_TIMEOUT_MS = 2_000;

/** What varies between rounds: the state backend and the kind of checkpoint. */
const VARIANTS = {
  'hashmap-aligned': [],
  'hashmap-unaligned': ['-D', 'execution.checkpointing.unaligned.enabled=true'],
  'hashmap-aligned-timeout': ['-D', 'execution.checkpointing.aligned-checkpoint-timeout=5 ms'],
  'hashmap-incremental': ['-D', 'execution.checkpointing.incremental=true'],
  'lmdb-incremental': ['-D', 'state.backend.type=lmdb', '-D', 'execution.checkpointing.incremental=true'],
  changelog: ['-D', 'state.backend.changelog.enabled=true', '-D', 'state.changelog.dstl.dfs.batch.persist-delay=20 ms', '-D', 'state.backend.changelog.periodic-materialize.interval=500 ms'],
};

const TOPOLOGIES = ['local', 'standalone'];

function parseArgs(argv) {
  const o = { rounds: 8, minutes: Infinity, seed: Date.now() % 100_000, variant: undefined, topology: undefined };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--rounds') o.rounds = Number(value);
    else if (flag === '--minutes') o.minutes = Number(value);
    else if (flag === '--seed') o.seed = Number(value);
    else if (flag === '--variant') o.variant = value;
    else if (flag === '--topology') o.topology = value;
    else throw new Error(`unknown argument ${flag}\nusage: node bench/chaos-soak.js [--rounds N] [--minutes M] [--seed S] [--variant ${Object.keys(VARIANTS).join('|')}] [--topology ${TOPOLOGIES.join('|')}]`);
    i++;
  }
  for (const k of ['rounds', 'minutes', 'seed']) if (!(o[k] >= 0)) throw new Error(`--${k} must be a number >= 0`);
  if (o.variant !== undefined && !(o.variant in VARIANTS)) throw new Error(`unknown variant ${o.variant}; one of ${Object.keys(VARIANTS).join(', ')}`);
  if (o.topology !== undefined && !TOPOLOGIES.includes(o.topology)) throw new Error(`unknown topology ${o.topology}; one of ${TOPOLOGIES.join(', ')}`);
  return o;
}

/** The reference, computed apart from the job: key k of `n % keys` sees counts 1..c_k once each. */
function reference(records, keys) {
  const out = new Map();
  for (let k = 0; k < keys; k++) {
    const c = Math.floor(records / keys) + (k < records % keys ? 1 : 0);
    for (let i = 1; i <= c; i++) out.set(`${k}:${i}`, 1);
  }
  return out;
}

function compare(lines, want) {
  const got = new Map();
  for (const l of lines) got.set(l, (got.get(l) ?? 0) + 1);
  let duplicates = 0;
  let missing = 0;
  let unexpected = 0;
  for (const [k, n] of want) {
    const g = got.get(k) ?? 0;
    if (g < n) missing += n - g;
    if (g > n) duplicates += g - n;
  }
  for (const [k, g] of got) if (!want.has(k)) unexpected += g;
  return { duplicates, missing, unexpected };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const HEARTBEAT = ['-D', `heartbeat.timeout=${HEARTBEAT_TIMEOUT_MS} ms`, '-D', 'heartbeat.interval=500 ms'];

/** Starts `sluice <args>`; resolves with the process and the first match of `ready` in its output. */
function startSluice(args, ready) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      // SOAK_LOG=<file>: every process's output, prefixed with its command and pid (debugging a round).
      if (process.env.SOAK_LOG) appendFileSync(process.env.SOAK_LOG, d.toString().replace(/^(?=.)/gm, `[${args[0]} ${child.pid}] `));
      out = (out + d.toString()).slice(-20_000);
      const m = ready.exec(out);
      if (m !== null) resolve({ child, match: m, output: () => out });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`sluice ${args[0]} exited (${code ?? signal}):\n${out}`)));
  });
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

const stopProcess = async (child) => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  if ((await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)])) === false) child.kill('SIGKILL');
  await exited;
};

/** The soak's processes, and those frozen right now: killed (thawed first) if the soak is interrupted. */
const children = new Set();
const frozen = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const pid of [...frozen, ...[...children].map((c) => c.pid)]) {
      try {
        process.kill(pid, 'SIGCONT');
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    process.exit(130);
  });
}

/** Freezes a process past the heartbeat timeout, then thaws it. */
async function freeze(pid, int) {
  const frozenMs = HEARTBEAT_TIMEOUT_MS + 500 + int(2_000);
  process.kill(pid, 'SIGSTOP');
  frozen.add(pid);
  await sleep(frozenMs);
  frozen.delete(pid);
  process.kill(pid, 'SIGCONT');
  return `SIGSTOP ${frozenMs} ms`;
}

/** `sluice cluster run`: it starts a TaskManager again when one dies. Kept across rounds. */
async function startLocal() {
  const { child, match } = await startSluice(['cluster', 'run', '--taskmanagers', String(TASK_MANAGERS), '--rpc-port', '0', '--rest-port', '0', ...HEARTBEAT], /cluster ready: rpc \S+ rest http:\/\/(\S+)/);
  const rest = match[1];
  return {
    name: 'local',
    rest: () => rest,
    async inject(next, int) {
      const pids = await taskManagerPids(rest);
      if (pids.length < TASK_MANAGERS) return undefined; // one is still coming back
      const victim = pids[int(pids.length)];
      if (next() < 0.3) return `TaskManager ${await freeze(victim, int)}`;
      process.kill(victim, 'SIGKILL');
      return 'TaskManager SIGKILL';
    },
    stop: () => stopProcess(child),
  };
}

/** `sluice jobmanager` and `sluice taskmanager` processes, started again by the soak. One per round. */
async function startStandalone(haDir) {
  const rpcPort = await freePort();
  const restPort = await freePort();
  const rest = `127.0.0.1:${restPort}`;
  const jmArgs = ['jobmanager', '--rpc-port', String(rpcPort), '--rest-port', String(restPort), '-D', `high-availability.storageDir=${haDir}`, ...HEARTBEAT];
  let jm = await startSluice(jmArgs, /JobManager ready/);
  let jobManager = jm.child;
  /** What the JobManagers killed so far logged about jobs that ended. */
  let endedBefore = '';
  const startTaskManager = async (id) => (await startSluice(['taskmanager', '--jobmanager', `127.0.0.1:${rpcPort}`, '--id', id, ...HEARTBEAT], /registered at the JobManager/)).child;
  const taskManagers = [];
  for (let i = 0; i < TASK_MANAGERS; i++) taskManagers.push(await startTaskManager(`tm-${i}`));
  return {
    name: 'standalone',
    rest: () => rest,
    // A job that finished just before its JobManager was killed is unknown to the next one (its
    // high-availability record went with the end, as Flink's does): the log of the old one says so.
    finishedBefore: (jobId) => endedBefore.includes(`job ${jobId} finished`),
    async inject(next, int) {
      const what = next();
      if (what < 0.25) {
        // Killed, or stopped gracefully (SIGTERM suspends the job, keeping its checkpoints and HA record).
        const signal = what < 0.15 ? 'SIGKILL' : 'SIGTERM';
        const exited = new Promise((r) => jobManager.once('exit', r));
        jobManager.kill(signal);
        await exited;
        endedBefore += jm.output();
        const downMs = int(1_500);
        await sleep(downMs);
        jm = await startSluice(jmArgs, /JobManager ready/);
        jobManager = jm.child;
        return `JobManager ${signal}, ${downMs} ms down`;
      }
      const i = int(TASK_MANAGERS);
      const victim = taskManagers[i];
      if (what < 0.45) return `TaskManager ${await freeze(victim.pid, int)}`;
      victim.kill('SIGKILL');
      await new Promise((r) => victim.once('exit', r));
      const downMs = int(2_000);
      await sleep(downMs);
      taskManagers[i] = await startTaskManager(`tm-${i}`);
      return `TaskManager SIGKILL, ${downMs} ms down`;
    },
    async stop() {
      await Promise.all([...taskManagers, jobManager].map(stopProcess));
    },
  };
}

async function get(rest, path) {
  const res = await fetch(`http://${rest}${path}`);
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** GET, retried while the JobManager is away (killed and coming back) or has not taken the job back yet. */
async function getRetrying(rest, path, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await get(rest(), path);
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await sleep(200);
    }
  }
}

async function taskManagerPids(rest) {
  const { taskmanagers } = await get(rest, '/taskmanagers');
  return taskmanagers.map((t) => Number(t.path.split('/').at(-1)));
}

async function round(cluster, seed, variant, dirs) {
  const next = seededRandom(seed);
  const int = (n) => Math.floor(next() * n);
  const records = 40_000 + int(40_000);
  const keys = 3 + int(12);
  const rate = 4_000 + int(6_000);
  const faults = 3 + int(5);
  const out = mkdtempSync(join(tmpdir(), 'sluice-soak-out-'));
  const chk = mkdtempSync(join(tmpdir(), 'sluice-soak-chk-'));
  dirs.push(out, chk);
  const options = [
    '-D', `execution.checkpointing.interval=${50 + int(200)}`, '-D', `execution.checkpointing.dir=${chk}`,
    ...VARIANTS[variant],
    '-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=1000', '-D', `restart-strategy.fixed-delay.delay=${int(300)} ms`,
  ];
  // The numbers' ranges handed out on request (split requests and the enumerator's state in
  // checkpoints) or statically, drawn per run: a stop-with-savepoint may switch between them.
  const drawSplits = () => (int(2) === 0 ? 'static' : 'on-request');
  let splits = drawSplits();
  const submit = async (parallelism, savepoint) =>
    (
      await run(process.execPath, [
        BIN, 'run', '--jobmanager', cluster.rest(), '--detached', '--no-typecheck', '-p', String(parallelism),
        ...(savepoint === undefined ? [] : ['-s', savepoint]),
        ...options,
        JOB, out, String(records), String(keys), String(rate), '0', splits,
      ])
    ).stdout.trim();
  let parallelism = TASK_MANAGERS;
  const firstSplits = splits;
  let jobId = await submit(parallelism);
  /** Stops the job with a savepoint and resumes it from there at the other parallelism; undefined when the stop did not happen. */
  const rescale = async () => {
    const savepoints = mkdtempSync(join(tmpdir(), 'sluice-soak-sp-'));
    dirs.push(savepoints);
    let stdout;
    let path;
    try {
      ({ stdout } = await run(process.execPath, [BIN, 'stop', '-m', cluster.rest(), '--savepoint-path', savepoints, jobId]));
    } catch (e) {
      // The savepoint completed but the job then failed instead of finishing (a TaskManager
      // killed while the stopped tasks closed): the job is over, and the savepoint is where
      // it goes on from.
      path = /a savepoint was created at (\S+), but job/.exec(`${e.stderr ?? ''}`)?.[1];
      // Otherwise refused: the job restarts, its JobManager is away, or it read its last record
      // meanwhile (then it finished by itself). The job goes on as it was; the output check at
      // the end would show a stop that failed yet ended the job early.
      if (path === undefined) return undefined;
    }
    if (stdout !== undefined) {
      path = /Savepoint: (\S+)/.exec(stdout)?.[1];
      if (path === undefined) throw new Error(`sluice stop printed no savepoint path:\n${stdout}`);
    }
    const from = parallelism;
    const fromSplits = splits;
    parallelism = parallelism === 1 ? TASK_MANAGERS : 1;
    splits = drawSplits();
    jobId = await submit(parallelism, path);
    return `stop-with-savepoint, resumed at parallelism ${from} -> ${parallelism}${fromSplits === splits ? '' : ` (splits ${fromSplits} -> ${splits})`}`;
  };
  const injected = [];
  const deadline = Date.now() + 240_000;
  let state = '';
  while (Date.now() < deadline) {
    try {
      state = (await getRetrying(cluster.rest, `/jobs/${jobId}`)).state;
    } catch (e) {
      if (!/: 404 /.test(e.message) || cluster.finishedBefore?.(jobId) !== true) throw e;
      state = 'FINISHED';
    }
    if (state === 'FINISHED' || state === 'FAILED' || state === 'CANCELED') break;
    if (injected.length === faults) {
      await sleep(200);
      continue;
    }
    await sleep(200 + int(1_500));
    try {
      const fault = next() < 0.2 ? await rescale() : await cluster.inject(next, int);
      if (fault !== undefined) injected.push(fault);
    } catch (e) {
      if (e.code !== 'ESRCH') throw e; // it exited on its own meanwhile
    }
  }
  const result = state === 'FINISHED' ? await getRetrying(cluster.rest, `/jobs/${jobId}/result`).catch(() => ({})) : {};
  if (state !== 'FINISHED' && state !== 'FAILED' && state !== 'CANCELED') await fetch(`http://${cluster.rest()}/jobs/${jobId}`, { method: 'PATCH' }).catch(() => {});
  const diff = state === 'FINISHED' ? compare(await readCommittedLines(out), reference(records, keys)) : undefined;
  const exceptions = state === 'FINISHED' ? undefined : await get(cluster.rest(), `/jobs/${jobId}/exceptions`).catch((e) => String(e));
  return { state, records, keys, rate, splits: firstSplits, faults: injected, numRestarts: result.numRestarts, diff, exceptions };
}

const o = parseArgs(process.argv.slice(2));
const names = Object.keys(VARIANTS);
const started = Date.now();
const dirs = [];
let local;
let failed = 0;
let done = 0;
try {
  for (let r = 0; r < o.rounds && Date.now() - started < o.minutes * 60_000; r++) {
    const seed = o.seed + r;
    const variant = o.variant ?? names[r % names.length];
    const topology = o.topology ?? TOPOLOGIES[Math.floor(r / names.length) % TOPOLOGIES.length];
    let cluster;
    if (topology === 'local') cluster = local ??= await startLocal();
    else {
      const ha = mkdtempSync(join(tmpdir(), 'sluice-soak-ha-'));
      dirs.push(ha);
      cluster = await startStandalone(ha);
    }
    const t0 = Date.now();
    let res;
    try {
      res = await round(cluster, seed, variant, dirs);
    } catch (e) {
      res = { state: `ERROR ${e.message}`, faults: [] };
    }
    done++;
    const ok = res.state === 'FINISHED' && res.diff.duplicates === 0 && res.diff.missing === 0 && res.diff.unexpected === 0;
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} seed ${seed} ${topology} ${variant}: ${res.records} records, ${res.keys} keys, ${res.rate}/s, splits ${res.splits}; faults ${res.faults.join(', ') || 'none'}; ` +
        `${res.state}, ${res.numRestarts ?? '?'} restarts, ${res.diff === undefined ? '' : `duplicates ${res.diff.duplicates}, missing ${res.diff.missing}, unexpected ${res.diff.unexpected}, `}${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    if (!ok) {
      failed++;
      console.log(`  reproduce: node bench/chaos-soak.js --rounds 1 --seed ${seed} --variant ${variant} --topology ${topology}`);
      if (res.exceptions !== undefined) console.log(`  exceptions: ${JSON.stringify(res.exceptions).slice(0, 4_000)}`);
    }
    // A standalone cluster is the round's own; a local one that lost its way is not reused.
    if (topology === 'standalone' || !ok) {
      await cluster.stop();
      if (cluster === local) local = undefined;
    }
  }
} finally {
  await local?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
console.log(`chaos soak: ${done} rounds, ${failed} failed, ${((Date.now() - started) / 60_000).toFixed(1)} min (first seed ${o.seed})`);
process.exit(failed === 0 ? 0 : 1);
