// "Many hosts": the JobManager and two TaskManagers each in a network namespace of its own,
// joined by veth pairs to a bridge in a fourth ("switch") namespace. Nothing is configured in
// the root namespace; every address lives inside the namespaces. Cutting one TaskManager's
// link (its switch port goes down) leaves its TCP connections silent, without a reset, so the
// JobManager notices through missing heartbeats; the job fails over onto the other
// TaskManager and must still give exactly the reference output. Needs root (CAP_NET_ADMIN).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'sluice.js');
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');

const suffix = `${process.pid}`;
const NS = { jm: `sl-jm-${suffix}`, tm1: `sl-tm1-${suffix}`, tm2: `sl-tm2-${suffix}`, sw: `sl-sw-${suffix}` } as const;
// Addresses exist only inside this run's namespaces, so parallel runs can use the same ones.
const ADDR = { jm: '10.213.0.1', tm1: '10.213.0.2', tm2: '10.213.0.3' } as const;
const RPC = `${ADDR.jm}:6123`;
const REST = `${ADDR.jm}:8081`;

const processes: ChildProcess[] = [];
const logs = new Map<string, string>();
const dirs: string[] = [];
const created: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-netns-'));
  dirs.push(d);
  return d;
};

async function ip(...args: string[]): Promise<string> {
  try {
    return (await run('ip', args)).stdout;
  } catch (e) {
    const err = e as Error & { stderr?: string };
    throw new Error(`ip ${args.join(' ')} failed: ${err.stderr?.trim() || err.message}`);
  }
}

/** Namespaces of earlier runs whose process is gone (a run killed before its cleanup). */
async function removeStaleNamespaces(): Promise<void> {
  const list = await run('ip', ['netns', 'list']).then((r) => r.stdout, () => '');
  for (const m of list.matchAll(/^(sl-(?:jm|tm1|tm2|sw)-(\d+))\b/gm)) {
    let alive = true;
    try {
      process.kill(Number(m[2]), 0);
    } catch {
      alive = false;
    }
    if (!alive) await run('ip', ['netns', 'del', m[1]!]).catch(() => undefined);
  }
}

async function setUpNetwork(): Promise<void> {
  await removeStaleNamespaces();
  try {
    await run('ip', ['netns', 'add', NS.sw]);
    created.push(NS.sw);
  } catch (e) {
    const err = e as Error & { stderr?: string };
    throw new Error(
      `this test runs the cluster in network namespaces and needs 'ip netns' (iproute2, root or CAP_NET_ADMIN + CAP_SYS_ADMIN); ` +
        `'ip netns add' failed: ${err.stderr?.trim() || err.message}`,
    );
  }
  await ip('-n', NS.sw, 'link', 'add', 'br0', 'type', 'bridge');
  await ip('-n', NS.sw, 'link', 'set', 'br0', 'up');
  await ip('-n', NS.sw, 'link', 'set', 'lo', 'up');
  for (const host of ['jm', 'tm1', 'tm2'] as const) {
    const ns = NS[host];
    await ip('netns', 'add', ns);
    created.push(ns);
    // The veth pair is made inside the switch namespace and one end moved into the host's:
    // no interface ever appears in the root namespace.
    await ip('-n', NS.sw, 'link', 'add', `p-${host}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
    await ip('-n', NS.sw, 'link', 'set', `p-${host}`, 'master', 'br0');
    await ip('-n', NS.sw, 'link', 'set', `p-${host}`, 'up');
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
    await ip('-n', ns, 'addr', 'add', `${ADDR[host]}/24`, 'dev', 'eth0');
    await ip('-n', ns, 'link', 'set', 'eth0', 'up');
  }
}

/** Starts `sluice <args>` inside a namespace; resolves once `ready` shows in its output. */
function startIn(ns: string, name: string, args: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  processes.push(child);
  logs.set(name, '');
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer): void => {
      const out = logs.get(name)! + d.toString();
      logs.set(name, out);
      if (ready.test(out)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} (sluice ${args[0]} in namespace ${ns}) exited (${code}):\n${logs.get(name)}`)));
  });
}

/** GET on the JobManager's REST API, which is reachable only inside its namespace. */
async function get<T>(path: string): Promise<T> {
  const { stdout } = await run('ip', ['netns', 'exec', NS.jm, 'curl', '-sS', '--max-time', '5', `http://${REST}${path}`]);
  return JSON.parse(stdout) as T;
}

beforeAll(async () => {
  await setUpNetwork();
  // The root namespace cannot reach the JobManager: the addresses exist only in the namespaces.
  await startIn(NS.jm, 'jobmanager', [
    'jobmanager', '--rpc-port', '6123', '--rest-port', '8081', '--rest-address', ADDR.jm,
    '-D', `jobmanager.rpc.address=${ADDR.jm}`, '-D', 'heartbeat.interval=500', '-D', `heartbeat.timeout=${process.env.SLUICE_NETNS_HEARTBEAT_TIMEOUT ?? 3000}`,
  ], /REST API at http:\/\//);
  await Promise.all(
    (['tm1', 'tm2'] as const).map((h) =>
      startIn(NS[h], h, ['taskmanager', '--jobmanager', RPC, '--slots', '2', '--id', h, '-D', `taskmanager.host=${ADDR[h]}`], /registered at the JobManager/),
    ),
  );
}, 60_000);

afterAll(async () => {
  for (const p of processes) {
    if (p.exitCode === null && p.signalCode === null) {
      p.kill('SIGKILL');
      await new Promise((r) => p.once('exit', r));
    }
  }
  for (const ns of created.reverse()) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
  if (process.env.SLUICE_KEEP_NETNS === '1') {
    for (const [name, text] of logs) writeFileSync(join(dirs[0] ?? tmpdir(), `${name}.log`), text);
    console.log(`kept ${dirs.join(' ')}`);
  } else for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a cluster over several hosts (network namespaces)', () => {
  it('the hosts reach each other only through their namespace addresses', async () => {
    const { taskmanagers } = await get<{ taskmanagers: { id: string; path: string; slotsNumber: number }[] }>('/taskmanagers');
    expect(taskmanagers.map((t) => t.id).sort()).toEqual(['tm1', 'tm2']);
    for (const t of taskmanagers) {
      expect(t.path).toMatch(new RegExp(`^tcp://${ADDR[t.id as 'tm1' | 'tm2'].replace(/\./g, '\\.')}:\\d+/\\d+$`));
      expect(t.slotsNumber).toBe(2);
    }
    // Not from the root namespace (whatever answers there, if anything, is not this JobManager).
    const fromRoot = await fetch(`http://${REST}/overview`, { signal: AbortSignal.timeout(1000) })
      .then((r) => r.json() as Promise<Record<string, unknown>>)
      .then((j) => j['flink-version'] === 'sluice', () => false);
    expect(fromRoot).toBe(false);
  });

  it("cutting a TaskManager's link mid-job: heartbeat timeout, failover onto the other one, output exactly-once", async () => {
    const out = tempDir();
    const records = 36_000;
    const keys = 7;
    const { stdout } = await run('ip', [
      'netns', 'exec', NS.jm, process.execPath, BIN, 'run', '--jobmanager', REST, '--detached', '--no-typecheck', '-p', '2',
      '-D', 'execution.checkpointing.interval=200', '-D', `execution.checkpointing.dir=${tempDir()}`,
      '-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=20', '-D', 'restart-strategy.fixed-delay.delay=300 ms',
      JOB, out, String(records), String(keys), '4000',
    ]);
    const jobId = stdout.trim();
    expect(jobId).toMatch(/^[0-9a-f]{32}$/);
    // Cut the link once the job runs on both TaskManagers and has completed checkpoints.
    for (;;) {
      const c = await get<{ counts: { completed: number } }>(`/jobs/${jobId}/checkpoints`).catch(() => ({ counts: { completed: 0 } }));
      if (c.counts.completed >= 3) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const { taskmanagers } = await get<{ taskmanagers: { id: string; freeSlots: number }[] }>('/taskmanagers');
    expect(taskmanagers.map((t) => [t.id, t.freeSlots]).sort(), logs.get('jobmanager')).toEqual([['tm1', 1], ['tm2', 1]]);
    const cutAt = Date.now();
    await ip('-n', NS.sw, 'link', 'set', 'p-tm1', 'down');

    const deadline = Date.now() + 40_000;
    let state = '';
    while (Date.now() < deadline) {
      state = (await get<{ state: string }>(`/jobs/${jobId}`)).state;
      if (state === 'FINISHED' || state === 'FAILED') break;
      await new Promise((r) => setTimeout(r, 300));
    }
    console.log(`netns failover: job ${state} ${Date.now() - cutAt} ms after the cut`);
    expect(state, logs.get('jobmanager')).toBe('FINISHED');
    const jmLog = logs.get('jobmanager')!;
    expect(jmLog).toMatch(/TaskManager tm1 \(pid \d+\) lost: no heartbeat/);
    const result = await get<{ numRestarts: number }>(`/jobs/${jobId}/result`);
    expect(result.numRestarts).toBeGreaterThanOrEqual(1);
    const left = await get<{ taskmanagers: { id: string }[] }>('/taskmanagers');
    expect(left.taskmanagers.map((t) => t.id)).toEqual(['tm2']);
    const committed = await readCommittedLines(out);
    expect(compareMultisets(committed, countReference(records, keys))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });

    // The link comes back: the TaskManager, which kept trying, registers again.
    await ip('-n', NS.sw, 'link', 'set', 'p-tm1', 'up');
    const back = Date.now();
    let ids: string[] = [];
    while (Date.now() - back < 15_000) {
      ids = (await get<{ taskmanagers: { id: string }[] }>('/taskmanagers')).taskmanagers.map((t) => t.id).sort();
      if (ids.length === 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`netns: tm1 registered again ${Date.now() - back} ms after its link came back`);
    expect(ids, logs.get('tm1')).toEqual(['tm1', 'tm2']);
  }, 60_000);
});
