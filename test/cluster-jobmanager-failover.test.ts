import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { parseLeaderInfo, type LeaderInfo } from '../src/cluster/ha/leader-info.js';
import { ZooKeeperConnection } from '../src/cluster/ha/zookeeper-connection.js';
import { toLogger } from '../src/util/logger.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { startZooKeeperServer, type ZooKeeperService } from './services/zookeeper-server.js';

/**
 * Standby JobManagers with leader election on a real ZooKeeper (high-availability.type
 * zookeeper): three `sluice jobmanager` processes, two TaskManagers that find the leader in
 * ZooKeeper, and the keyed count job (exactly-once file sink) with checkpoints. The leader is
 * SIGKILLed twice, each time after a seeded number of completed checkpoints: a standby leads,
 * takes the job back from the newest completed checkpoint (never an older one), its checkpoint
 * ids go on after it, and the output equals the reference with no loss and no duplicate.
 * SLUICE_SEED replays a run.
 */

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'sluice.js');
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');
const SEED = Number(process.env.SLUICE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SESSION_TIMEOUT_MS = 3000;
const RECORDS = 40_000;
const KEYS = 5;
const EVENTS_PER_SECOND = 2000;
const KILLS = 2;

/** mulberry32: the seeded choices of this test. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const processes: ChildProcess[] = [];
const dirs: string[] = [];
let zk: ZooKeeperService | undefined;
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-jm-failover-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  zk = await startZooKeeperServer();
}, 240_000);

afterAll(async () => {
  for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await zk?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
}

/** Starts `sluice <args>` and resolves once its output matches `ready`. */
function start(args: string[], ready: RegExp): Promise<Started> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  processes.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (ready.test(out)) resolve({ child, output: () => out });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`sluice ${args[0]} exited (${code}):\n${out}`)));
  });
}

async function get<T>(url: string): Promise<T | undefined> {
  try {
    const r = await fetch(url);
    return r.ok ? ((await r.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}

/** Polls `probe` every 100 ms until it returns a value, or fails naming `what` after `timeoutMs`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, context: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (seed ${SEED})\n${context()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface CheckpointsJson {
  readonly counts: { readonly completed: number };
  readonly latest: { readonly completed: { readonly id: number } | null; readonly restored: { readonly id: number } | null };
}

describe('standby JobManagers on ZooKeeper', () => {
  it('SIGKILLed leaders: a standby leads, takes the job back from the newest checkpoint, ids go on, output exactly once', async () => {
    console.log(`jobmanager failover: seed ${SEED} (SLUICE_SEED=${SEED} replays it)`);
    const random = seeded(SEED);
    const quorum = zk!.connectString;
    const clusterId = `/failover-${SEED}`;
    const storage = tempDir();
    const chk = tempDir();
    const out = tempDir();
    const ha = [
      '-D', 'high-availability.type=zookeeper',
      '-D', `high-availability.zookeeper.quorum=${quorum}`,
      '-D', `high-availability.cluster-id=${clusterId}`,
      '-D', `high-availability.storageDir=${storage}`,
      '-D', `high-availability.zookeeper.client.session-timeout=${SESSION_TIMEOUT_MS}`,
      '-D', 'high-availability.zookeeper.client.retry-wait=500',
    ];
    const jobManagers = await Promise.all([0, 1, 2].map(() => start(['jobmanager', '--rpc-port', '0', '--rest-port', '0', ...ha], /JobManager ready/)));
    for (let i = 0; i < 2; i++) await start(['taskmanager', '--jobmanager', `zookeeper://${quorum}`, '--id', `tm-${i}`, ...ha.slice(4)], /registered at the JobManager/);
    const logs = (): string => jobManagers.map((j, i) => `--- jobmanager ${i}:\n${j.output().slice(-4000)}`).join('\n');

    // The leader as ZooKeeper says, read with a connection of the test's own.
    const zkConn = await ZooKeeperConnection.open({ quorum, sessionTimeoutMs: 10_000, connectionTimeoutMs: 10_000, log: toLogger(undefined, 'test') });
    const leaderNode = `/flink${clusterId}/leader/connection_info`;
    const leader = async (other?: LeaderInfo): Promise<LeaderInfo | undefined> => {
      const data = await zkConn.getData(leaderNode);
      const info = data === undefined ? undefined : parseLeaderInfo(data);
      return info !== undefined && info.leaderSessionId !== other?.leaderSessionId && info.restUrl !== other?.restUrl ? info : undefined;
    };
    const processOf = (l: LeaderInfo): Started => {
      const p = jobManagers.find((j) => j.output().includes(`REST API at ${l.restUrl}`));
      if (p === undefined) throw new Error(`no JobManager process serves ${l.restUrl}\n${logs()}`);
      return p;
    };
    try {
      let current = await until('a leader in ZooKeeper', () => leader(), 20_000, logs);
      const { stdout } = await run(process.execPath, [
        BIN, 'run', '--jobmanager', current.restUrl.replace(/^https?:\/\//, ''), '--detached', '--no-typecheck', '-p', '2',
        '-D', 'execution.checkpointing.interval=100', '-D', `execution.checkpointing.dir=${chk}`,
        JOB, out, String(RECORDS), String(KEYS), String(EVENTS_PER_SECOND),
      ]);
      const jobId = stdout.trim();
      const checkpoints = (l: LeaderInfo): Promise<CheckpointsJson | undefined> => get<CheckpointsJson>(`${l.restUrl}/jobs/${jobId}/checkpoints`);
      let lastCompletedId = 0;
      for (let kill = 0; kill < KILLS; kill++) {
        // A seeded number of checkpoints completed under this leader (after its restore).
        const more = 2 + Math.floor(random() * 4);
        const startId = lastCompletedId;
        const seen = await until(
          `leader ${kill}: ${more} more checkpoints after ${startId}`,
          async () => {
            const c = await checkpoints(current);
            const id = c?.latest.completed?.id ?? 0;
            return id >= startId + more ? id : undefined;
          },
          40_000,
          logs,
        );
        const victim = processOf(current);
        victim.child.kill('SIGKILL');
        await new Promise((r) => victim.child.once('exit', r));
        const next = await until(`a new leader after kill ${kill}`, () => leader(current), 30_000, logs);
        // The new leader restores the newest completed checkpoint (the one last seen, or one completed just after), never an older one.
        const restored = await until(
          `job ${jobId} taken back by the new leader`,
          async () => {
            const c = await checkpoints(next);
            return c?.latest.restored === null || c?.latest.restored === undefined ? undefined : c.latest.restored.id;
          },
          30_000,
          logs,
        );
        expect(restored, `restored checkpoint after kill ${kill} (seed ${SEED})`).toBeGreaterThanOrEqual(seen);
        // Its checkpoint ids go on after it.
        const firstNew = await until(
          `a checkpoint completed under the new leader after kill ${kill}`,
          async () => {
            const c = await checkpoints(next);
            const id = c?.latest.completed?.id;
            return id !== undefined && id !== restored ? id : undefined;
          },
          30_000,
          logs,
        );
        expect(firstNew, `checkpoint ids go on (seed ${SEED})`).toBeGreaterThan(restored);
        console.log(`kill ${kill}: leader at ${current.restUrl} killed after checkpoint ${seen}; ${next.restUrl} restored ${restored}, next completed ${firstNew}`);
        lastCompletedId = firstNew;
        current = next;
      }
      const status = await until(
        `job ${jobId} finished`,
        async () => {
          const s = (await get<{ jobs: { id: string; status: string }[] }>(`${current.restUrl}/jobs`))?.jobs.find((j) => j.id === jobId)?.status;
          return s === 'FINISHED' || s === 'FAILED' ? s : undefined;
        },
        90_000,
        logs,
      );
      expect(status, logs()).toBe('FINISHED');
      const committed = await readCommittedLines(out);
      expect(compareMultisets(committed, countReference(RECORDS, KEYS)), `seed ${SEED}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      // A finished job leaves the registry.
      await until('the finished job gone from ZooKeeper', async () => ((await zkConn.exists(`/flink${clusterId}/jobs/${jobId}`)) ? undefined : true), 10_000, logs);
    } finally {
      zkConn.close();
    }
  }, 180_000);
});
