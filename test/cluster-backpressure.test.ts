// Backpressure across processes: a fast unbounded source feeding, through a keyBy between two
// TaskManager processes, a sink that sleeps per record. With credit-based flow control the
// source is throttled to the sink's pace and the TaskManagers' memory stays flat; without it
// the records would pile up in the consumers' (or producers') buffers.
import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'sluice.js');
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'slow-sink-job.ts');
const PAYLOAD = 2000;
const MB = 1024 * 1024;

let cluster: ChildProcess;
let rest = '';

beforeAll(async () => {
  cluster = spawn(process.execPath, [BIN, 'cluster', 'run', '--taskmanagers', '2', '--rpc-port', '0', '--rest-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  cluster.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  rest = await new Promise<string>((resolve, reject) => {
    let out = '';
    cluster.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /cluster ready: rpc \S+ rest http:\/\/(\S+)/.exec(out);
      if (m !== null) resolve(m[1]!);
    });
    cluster.once('exit', (code) => reject(new Error(`the cluster exited (${code}):\n${log}`)));
  });
});

afterAll(async () => {
  if (cluster === undefined || cluster.exitCode !== null) return;
  cluster.kill('SIGTERM');
  await new Promise((r) => cluster.once('exit', r));
});

async function get<T>(path: string): Promise<T> {
  return (await (await fetch(`http://${rest}${path}`)).json()) as T;
}

interface Vertex {
  name: string;
  status: string;
  metrics: { 'read-records': number; 'write-records': number };
}

async function submit(sleepMs: number): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, 'run', '--jobmanager', rest, '--detached', '--no-typecheck', '-p', '2', JOB, String(sleepMs), String(PAYLOAD)]);
  return stdout.trim();
}

async function untilRunning(jobId: string): Promise<void> {
  for (;;) {
    const j = await get<{ state: string; vertices: Vertex[] }>(`/jobs/${jobId}`);
    if (j.state === 'RUNNING' && j.vertices[0]!.metrics['write-records'] > 0) return;
    if (j.state === 'FAILED') throw new Error(`job ${jobId} failed`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Records the source vertex emitted and the sink vertex read so far. */
async function progress(jobId: string): Promise<{ source: number; sink: number }> {
  const { vertices } = await get<{ vertices: Vertex[] }>(`/jobs/${jobId}`);
  return { source: vertices[0]!.metrics['write-records'], sink: vertices.at(-1)!.metrics['read-records'] };
}

async function cancel(jobId: string): Promise<void> {
  await fetch(`http://${rest}/jobs/${jobId}?mode=cancel`, { method: 'PATCH' });
  for (;;) {
    const { state } = await get<{ state: string }>(`/jobs/${jobId}`);
    if (state === 'CANCELED' || state === 'FAILED' || state === 'FINISHED') return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m === null) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

describe('backpressure across TaskManager processes', () => {
  it('a slow sink throttles a fast source on another process (credit-based flow control); memory stays flat', async () => {
    const { taskmanagers } = await get<{ taskmanagers: { path: string }[] }>('/taskmanagers');
    const pids = taskmanagers.map((t) => Number(t.path.split('/').at(-1)));
    expect(pids).toHaveLength(2);

    // The source's own pace, with a sink that keeps up (a lower bound: the machine is shared).
    const t0 = Date.now();
    const fast = await submit(0);
    await untilRunning(fast);
    await new Promise((r) => setTimeout(r, 1000)); // past the first batches' compilation
    const f0 = await progress(fast);
    const fastStart = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    const f1 = await progress(fast);
    const fastRate = ((f1.source - f0.source) * 1000) / (Date.now() - fastStart);
    await cancel(fast);
    const tFast = Date.now() - t0;

    // The same job with a sink that sleeps 1 ms per record.
    const slow = await submit(1);
    await untilRunning(slow);
    const tSlowUp = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 2000)); // warm-up: buffers fill, heaps settle
    const baseline = pids.map(rssBytes);
    const s0 = await progress(slow);
    const slowStart = Date.now();
    const peak = [...baseline];
    // Long enough that the unthrottled source would have produced four times the memory bound
    // (a loaded machine runs it slower: the sampling then lasts longer, up to 40 s).
    const sampleMs = Math.min(40_000, Math.max(10_000, ((4 * 64 * MB) / PAYLOAD / Math.max(fastRate, 1)) * 1000 * 1.25));
    while (Date.now() - slowStart < sampleMs) {
      await new Promise((r) => setTimeout(r, 250));
      pids.forEach((pid, i) => (peak[i] = Math.max(peak[i]!, rssBytes(pid))));
    }
    const s1 = await progress(slow);
    const seconds = (Date.now() - slowStart) / 1000;
    const tSlowEnd = Date.now() - t0;
    // The JobManager's metric queries read the TaskManagers' task metrics (they had record counts only).
    const { vertices } = await get<{ vertices: { id: string; name: string }[] }>(`/jobs/${slow}`);
    const backpressure = await get<{ 'backpressure-level': string; subtasks: { subtask: number; ratio: number }[] }>(`/jobs/${slow}/vertices/${vertices[0]!.id}/backpressure`);
    const sinkMetrics = await get<{ id: string }[]>(`/jobs/${slow}/vertices/${vertices.at(-1)!.id}/metrics`);
    // The TaskManagers report each subtask's back-pressured time with its progress.
    const sourceSubtasks = await get<{ subtasks: { metrics: { 'accumulated-backpressured-time': number } }[] }>(`/jobs/${slow}/vertices/${vertices[0]!.id}`);
    await cancel(slow);
    expect(backpressure.subtasks.map((x) => x.subtask), JSON.stringify(backpressure)).toEqual([0, 1]);
    expect(backpressure['backpressure-level'], JSON.stringify(backpressure)).toBe('high');
    // Sampled over seconds of a source held back: most of that time waiting for credit.
    for (const t of sourceSubtasks.subtasks) expect(t.metrics['accumulated-backpressured-time'], JSON.stringify(sourceSubtasks)).toBeGreaterThan(1000);
    expect(sinkMetrics.map((m) => m.id)).toEqual(expect.arrayContaining(['0.busyTimeMsPerSecond', '1.idleTimeMsPerSecond', '0.sleepy sink.numRecordsIn', '1.pass on.numRecordsOutPerSecond']));
    console.log(`phases: fast job done at ${tFast} ms, slow job running at ${tSlowUp} ms, sampled until ${tSlowEnd} ms, canceled at ${Date.now() - t0} ms`);

    const emitted = s1.source - s0.source;
    const growth = peak.map((p, i) => p - baseline[i]!);
    console.log(
      `backpressure: unthrottled source ${Math.round(fastRate)} records/s; with the slow sink ${Math.round(emitted / seconds)} records/s ` +
        `(sink ${Math.round((s1.sink - s0.sink) / seconds)}/s, in flight ${s1.source - s1.sink}); ` +
        `RSS ${baseline.map((b) => Math.round(b / MB))} MB -> peak ${peak.map((p) => Math.round(p / MB))} MB over ${seconds.toFixed(1)} s`,
    );
    // The unthrottled source would produce far more than the memory bound in the same time ...
    expect(fastRate * seconds * PAYLOAD).toBeGreaterThan(4 * 64 * MB);
    // ... but it is throttled to the sink's pace: it emits a small fraction of its own rate,
    expect(emitted).toBeLessThan(0.1 * fastRate * seconds);
    // what it emitted but the sink did not read yet stays within the network buffers' reach,
    expect(s1.source - s1.sink).toBeLessThan(200_000);
    // and the TaskManagers' memory stays flat.
    for (const g of growth) expect(g).toBeLessThan(64 * MB);
  }, 90_000);
});
