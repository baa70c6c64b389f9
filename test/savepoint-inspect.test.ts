import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { main } from '../src/cli/main.js';
import type { SnapshotInspection } from '../src/cli/savepoint-inspect.js';
import { countingPipeline } from './support/counting-job.js';

const KEYS = 11;
const RECORDS = 30_000;
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-inspect-'));
  dirs.push(d);
  return d;
};

/** Runs the CLI in this process and captures what it prints. */
async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

let savepointPath = '';
/** key -> the last count the job committed for it, i.e. the count in its state at the savepoint. */
const committedCounts = new Map<number, number>();
let committedLines = 0;

beforeAll(async () => {
  const out = tempDir();
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': 2,
    'execution.checkpointing.interval': 30,
    'execution.checkpointing.dir': tempDir(),
  });
  countingPipeline(env, { records: RECORDS, eventsPerSecond: 20_000, keys: KEYS, out });
  const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
  const done = executor.run();
  while (executor.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
  // Stop-with-savepoint commits: the committed output is exactly what the state at the savepoint counted.
  const savepoint = await executor.stopWithSavepoint(tempDir());
  expect((await done).status).toBe('FINISHED');
  savepointPath = savepoint.pointer;
  const lines = await readCommittedLines(out);
  committedLines = lines.length;
  for (const line of lines) {
    const [k, c] = line.split(':').map(Number) as [number, number];
    committedCounts.set(k, Math.max(committedCounts.get(k) ?? 0, c));
  }
}, 60_000);

afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('sluice savepoint inspect', () => {
  it('prints operators, states, key counts and decoded samples', async () => {
    expect(committedLines).toBeGreaterThan(0);
    expect(committedLines).toBeLessThan(RECORDS);
    const { code, stdout, stderr } = await cli('savepoint', 'inspect', savepointPath);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`Savepoint (canonical format) ${savepointPath}`);
    expect(stdout).toMatch(/job id +[0-9a-f]{32}/);
    expect(stdout).toMatch(/Operator numbers\n +parallelism 2, max parallelism 128/);
    expect(stdout).toMatch(/source splits: \d+/);
    expect(stdout).toMatch(new RegExp(`state 'count': value, not namespaced; ${committedCounts.size} keys`));
    // samples: key -> the count in the state, which is the last count committed for the key
    const samples = [...stdout.matchAll(/^ {6}(\d+) -> (\d+)$/gm)].map((m) => [Number(m[1]), Number(m[2])] as const);
    expect(samples.length).toBe(5);
    for (const [k, c] of samples) expect(c).toBe(committedCounts.get(k));
  });

  it('--json: key counts and values equal what the job wrote', async () => {
    const { code, stdout } = await cli('savepoint', 'inspect', '--json', '--samples', '100', savepointPath);
    expect(code).toBe(0);
    const i = JSON.parse(stdout) as SnapshotInspection;
    expect(i.type).toBe('savepoint');
    expect(i.savepointFormat).toBe('canonical');
    expect(i.path).toBe(savepointPath);
    expect(i.operators.map((o) => o.uid).sort()).toEqual(['count', 'numbers', 'sink']);
    const count = i.operators.find((o) => o.uid === 'count')!;
    expect(count).toMatchObject({ parallelism: 2, maxParallelism: 128, name: null });
    const state = count.keyedState!.states.find((s) => s.name === 'count')!;
    expect(state).toMatchObject({ kind: 'value', namespaced: false, keys: committedCounts.size, entries: committedCounts.size });
    expect(state.sizeBytes).toBeGreaterThan(0);
    const fromState = new Map(state.samples.map((s) => [s.key as number, s.value as number]));
    expect(fromState).toEqual(committedCounts);
    expect([...fromState.values()].reduce((a, b) => a + b, 0)).toBe(committedLines);
    const numbers = i.operators.find((o) => o.uid === 'numbers')!;
    expect(numbers.sourceSplits!.count).toBeGreaterThan(0);
    expect(numbers.keyedState).toBeNull();
    expect(i.stateSizeBytes).toBe(i.operators.reduce((a, o) => a + o.stateSizeBytes, 0));
  });

  it('a source with splits on request: the readers\' ranges and the enumerator\'s unassigned ones hold exactly the records not yet counted', async () => {
    const out = tempDir();
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'execution.checkpointing.interval': 30, 'execution.checkpointing.dir': tempDir() });
    countingPipeline(env, { records: RECORDS, eventsPerSecond: 20_000, keys: KEYS, out, splitAssignment: 'on-request' });
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const done = executor.run();
    while (executor.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await executor.stopWithSavepoint(tempDir());
    expect((await done).status).toBe('FINISHED');
    const committed = (await readCommittedLines(out)).length;
    const { code, stdout } = await cli('savepoint', 'inspect', '--json', '--samples', '1000', savepoint.pointer);
    expect(code).toBe(0);
    const numbers = (JSON.parse(stdout) as SnapshotInspection).operators.find((o) => o.uid === 'numbers')!;
    type Range = { next: number; end: number };
    const left = (splits: readonly unknown[]): number => (splits as Range[]).reduce((a, r) => a + (r.end - r.next), 0);
    expect(numbers.unassignedSplits!.count).toBeGreaterThan(0);
    expect(numbers.unassignedSplits!.samples.length).toBe(numbers.unassignedSplits!.count);
    expect(committed + left(numbers.sourceSplits?.samples ?? []) + left(numbers.unassignedSplits!.samples)).toBe(RECORDS);
    const text = await cli('savepoint', 'inspect', '--operator', 'numbers', savepoint.pointer);
    expect(text.stdout).toMatch(new RegExp(`splits not handed out yet \\(split enumerator\\): ${numbers.unassignedSplits!.count}, `));
  });

  it('a native savepoint of lmdb state (spilled to its state file, moved into the savepoint) shows exactly the counts the job committed', async () => {
    const out = tempDir();
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 2,
      'state.backend.type': 'lmdb',
      'state.backend.lmdb.localdir': tempDir(),
      'execution.checkpointing.interval': 30,
      'execution.checkpointing.dir': tempDir(),
      'execution.checkpointing.data-inline-threshold': 0,
    });
    countingPipeline(env, { records: RECORDS, eventsPerSecond: 20_000, keys: KEYS, out });
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const done = executor.run();
    while (executor.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await executor.stopWithSavepoint(tempDir(), false, 'NATIVE');
    expect((await done).status).toBe('FINISHED');
    const counts = new Map<number, number>();
    for (const line of await readCommittedLines(out)) {
      const [k, c] = line.split(':').map(Number) as [number, number];
      counts.set(k, Math.max(counts.get(k) ?? 0, c));
    }
    const { code, stdout } = await cli('savepoint', 'inspect', '--json', '--samples', '100', savepoint.pointer);
    expect(code).toBe(0);
    const i = JSON.parse(stdout) as SnapshotInspection;
    expect(i.savepointFormat).toBe('native');
    const state = i.operators.find((o) => o.uid === 'count')!.keyedState!.states.find((s) => s.name === 'count')!;
    expect(state).toMatchObject({ kind: 'value', namespaced: false, keys: counts.size });
    expect(new Map(state.samples.map((x) => [x.key as number, x.value as number]))).toEqual(counts);
  });

  it('--operator shows one operator; an unknown uid lists the uids', async () => {
    const { code, stdout } = await cli('savepoint', 'inspect', '--operator', 'count', '--json', savepointPath);
    expect(code).toBe(0);
    const i = JSON.parse(stdout) as SnapshotInspection;
    expect(i.operators.map((o) => o.uid)).toEqual(['count']);
    expect(i.operatorCount).toBe(3);
    const text = await cli('savepoint', 'inspect', '--operator', 'count', savepointPath);
    expect(text.stdout).toContain('Operator count');
    expect(text.stdout).not.toContain('Operator numbers');
    const unknown = await cli('savepoint', 'inspect', '--operator', 'nope', savepointPath);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/has no operator with uid 'nope'; its operators are: .*count/);
  });

  it('a bad path or a damaged savepoint gives a clear error', async () => {
    const missing = await cli('savepoint', 'inspect', '/nonexistent/savepoint-x');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('error: not a checkpoint or savepoint directory: /nonexistent/savepoint-x does not exist; check the path (a retained checkpoint lives in <dir>/<jobId>/chk-N)\n');
    const empty = tempDir();
    const noMetadata = await cli('savepoint', 'inspect', empty);
    expect(noMetadata.stderr).toContain(`not a checkpoint or savepoint directory: ${empty} has no _metadata`);
    const usage = await cli('savepoint', 'inspect');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: sluice savepoint inspect');

    const copy = tempDir();
    const bytes = readFileSync(join(savepointPath, '_metadata'));
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0xff;
    writeFileSync(join(copy, '_metadata'), bytes);
    const damaged = await cli('savepoint', 'inspect', copy);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(/error: snapshot: file .*_metadata is corrupt \(checksum mismatch/);
  });
});

describe('sluice savepoint inspect: window state, timers, retained checkpoints', () => {
  it('shows namespaced window state with its timers, in a retained checkpoint of a canceled job', async () => {
    const checkpoints = tempDir();
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 2,
      'execution.checkpointing.interval': 30,
      'execution.checkpointing.dir': checkpoints,
      'execution.checkpointing.externalized-checkpoint-retention': 'RETAIN_ON_CANCELLATION',
    });
    env
      .fromSource(numberSource({ count: 1_000_000, eventsPerSecond: 5_000 }), 'numbers')
      .uid('numbers')
      .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n))
      .keyBy((n) => n % 5)
      // Windows of 10 000 000 ms of event time (one per record): none fires while the job runs.
      .window(TumblingEventTimeWindows.of(10_000_000))
      .reduce((a, b) => a + b)
      .uid('sums')
      .sinkTo(new ExactlyOnceFileSink<number>(tempDir()))
      .uid('sink');
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const done = executor.run();
    while (executor.checkpointStats.counts.completed < 2) await new Promise((r) => setTimeout(r, 5));
    executor.cancel();
    await done;
    const jobDir = join(checkpoints, executor.jobId);
    const chk = readdirSync(jobDir).filter((d) => /^chk-\d+$/.test(d) && existsSync(join(jobDir, d, '_metadata')))[0]!;
    const { code, stdout, stderr } = await cli('savepoint', 'inspect', '--json', '--operator', 'sums', join(jobDir, chk));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const i = JSON.parse(stdout) as SnapshotInspection;
    expect(i.type).toBe('checkpoint');
    expect(i.savepointFormat).toBeNull();
    expect(i.checkpointId).toBe(Number(chk.slice(4)));
    const keyed = i.operators[0]!.keyedState!;
    const windowState = keyed.states.find((s) => s.namespaced)!;
    expect(windowState).toMatchObject({ keys: 5, entries: 5 });
    for (const sample of windowState.samples) {
      expect(sample.namespace).toEqual(expect.any(Number));
      expect(sample.value).toEqual(expect.any(Number));
    }
    expect(keyed.timers.count).toBeGreaterThanOrEqual(5);
    const text = await cli('savepoint', 'inspect', join(jobDir, chk));
    expect(text.stdout).toMatch(/^Retained checkpoint .*chk-\d+$/m);
    expect(text.stdout).toMatch(/namespaced; 5 keys, 5 entries \(key, namespace\)/);
    expect(text.stdout).toMatch(/^ {6}\d \[namespace \d+\] -> \d+$/m);
  });
});
