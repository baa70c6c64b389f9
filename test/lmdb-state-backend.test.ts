import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Configuration, StreamExecutionEnvironment, valueState, type Collector, type KeyedProcessContext, type KeyedProcessFunction, type KeyedRuntimeContext, type ValueState } from '../src/index.js';
import { DiscardingSink } from '../src/connectors/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';
import { FaultPlan } from '../src/testing/fault-plan.js';

const localDir = mkdtempSync(join(tmpdir(), 'sluice-lmdb-test-'));
afterAll(() => rmSync(localDir, { recursive: true, force: true }));

describe('state.backend.type', () => {
  it('accepts hashmap and lmdb; rocksdb is refused with what to use instead', () => {
    expect(new Configuration([['state.backend.type', 'lmdb']]).getString('state.backend.type')).toBe('lmdb');
    expect(new Configuration([['state.backend.type', 'HashMap']]).getString('state.backend.type')).toBe('hashmap');
    expect(() => new Configuration([['state.backend.type', 'rocksdb']])).toThrow(/no RocksDB backend.*state.backend.type: lmdb/);
    expect(() => new Configuration([['state.backend.type', 'memory']])).toThrow(/expected one of hashmap, lmdb/);
    const env = StreamExecutionEnvironment.create().setStateBackend('lmdb');
    expect(env.config.getString('state.backend.type')).toBe('lmdb');
  });

  it('a keyed job on lmdb gives the same results as on the heap; its working directories are deleted at the end', async () => {
    const run = async (backend: 'hashmap' | 'lmdb'): Promise<string[]> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'state.backend.lmdb.localdir': localDir, 'state.backend.lmdb.cache-entries': 50 });
      env.setStateBackend(backend);
      const sink = new CollectSink<string>();
      env
        .fromSource(numberSource({ count: 6000 }), 'numbers')
        .keyBy((n) => n % 700)
        .process(new CountPerKey())
        .sinkTo(sink, 'collect');
      await env.execute();
      return [...sink.values].sort();
    };
    const onLmdb = await run('lmdb');
    expect(onLmdb).toEqual(countReference(6000, 700));
    expect(await run('hashmap')).toEqual(onLmdb);
    await expect.poll(() => readdirSync(localDir).length, { timeout: 5000 }).toBe(0);
  });

  it('a localdir that is a file fails the job naming state.backend.lmdb.localdir (it was a bare ENOTDIR with a stack)', async () => {
    const file = join(localDir, 'a-file');
    writeFileSync(file, 'x');
    try {
      const env = StreamExecutionEnvironment.create({ 'restart-strategy.type': 'none', 'state.backend.type': 'lmdb', 'state.backend.lmdb.localdir': join(file, 'sub') });
      env
        .fromElements(1, 2)
        .keyBy((n) => n)
        .process(new CountPerKey())
        .sinkTo(new CollectSink<string>());
      await expect(env.executeAsync(undefined, { log: () => {} }).result).rejects.toThrow(
        /the lmdb state backend cannot make its working directory in '.*a-file\/sub' \(state\.backend\.lmdb\.localdir\): it \(or a parent\) is a file, not a directory; point state\.backend\.lmdb\.localdir at a writable directory/,
      );
    } finally {
      rmSync(file, { force: true });
    }
  });
});

describe('lmdb state backend: state larger than the heap', () => {
  // 40 MB of old space left Node 24 too little room for the job itself (it ran out in 2 of 5 runs).
  it('a keyed job with a 64 MB old-space limit keeps 200 MB of state (in a child process)', () => {
    const script = join(import.meta.dirname, '..', 'bench', 'larger-than-heap.js');
    expect(existsSync(join(import.meta.dirname, '..', 'dist', 'index.js')), 'npm run build first (npm test does)').toBe(true);
    const r = spawnSync(process.execPath, ['--max-old-space-size=64', script, 'lmdb', '100000', '2000', localDir], { encoding: 'utf8', timeout: 240_000 });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { stateBytes: number; heapUsedBytes: number };
    expect(result.stateBytes).toBe(200_000_000);
    // Far above the old-space limit (V8's total heap limit adds the young generation, which differs between Node versions).
    expect(result.stateBytes).toBeGreaterThan(2.5 * 64 * 2 ** 20);
    expect(result.heapUsedBytes).toBeLessThan(result.stateBytes / 2);
  }, 300_000);

  // A full checkpoint or savepoint of lmdb state used to be assembled in memory (the key groups,
  // then the file's bytes): two to four times the state in array buffers, which V8's old-space
  // limit does not count, so the process grew past any container's limit. Spilled key group by
  // key group, the snapshots add what V8 lets pile up before it collects array buffers (64 MB
  // steps), not the state.
  it('full checkpoints and a savepoint of 200 MB of state stay far below its size in memory; a job restored from the savepoint finds every key (in a child process)', () => {
    const script = join(import.meta.dirname, '..', 'bench', 'larger-than-heap.js');
    expect(existsSync(join(import.meta.dirname, '..', 'dist', 'index.js')), 'npm run build first (npm test does)').toBe(true);
    const dir = mkdtempSync(join(localDir, 'checkpoints-'));
    const local = join(dir, 'local');
    const r = spawnSync(process.execPath, ['--max-old-space-size=64', script, 'lmdb', '100000', '2000', local, join(dir, 'checkpoints')], { encoding: 'utf8', timeout: 240_000 });
    // The second job checks every key's value from the first (it fails the job otherwise).
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      stateBytes: number;
      savepoint: string;
      completedCheckpoints: number;
      checkpointStateBytesMax: number;
      snapshotPeakArrayBuffersBytes: number;
    };
    expect(result.stateBytes).toBe(200_000_000);
    expect(result.stateBytes).toBeGreaterThan(2.5 * 64 * 2 ** 20);
    expect(result.savepoint).toMatch(/savepoint-/);
    expect(result.completedCheckpoints).toBeGreaterThanOrEqual(2);
    expect(result.checkpointStateBytesMax, 'a checkpoint held the whole state').toBeGreaterThanOrEqual(result.stateBytes);
    expect(result.snapshotPeakArrayBuffersBytes).toBeLessThan(result.stateBytes / 2);
    expect(readdirSync(local), 'no spill file is left in the local directory').toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);
});

describe('lmdb state backend: full checkpoints spilled to their state files, under injected failures', () => {
  // In a checkpoint directory the spill file is moved into place; in jobmanager storage it is
  // read back into memory (inline state). Either way a restore finds exactly the state.
  for (const storage of ['filesystem', 'jobmanager'] as const) {
    it(`${storage} checkpoint storage: record and snapshot failures, restored from spilled checkpoints, the committed counts equal the reference`, async () => {
      const records = 12_000;
      const plan = FaultPlan.seeded({ seed: storage === 'filesystem' ? 31 : 32, recordFaults: 3, recordRange: records, snapshotAsyncFaults: 2, checkpointRange: 10 });
      const local = mkdtempSync(join(localDir, 'faults-'));
      const store = new TxnStore<string>();
      const env = StreamExecutionEnvironment.create({
        'parallelism.default': 2,
        'state.backend.type': 'lmdb',
        'state.backend.lmdb.localdir': local,
        'state.backend.lmdb.cache-entries': 20,
        'execution.checkpointing.interval': 20,
        'execution.checkpointing.storage': storage,
        ...(storage === 'filesystem' ? { 'execution.checkpointing.dir': mkdtempSync(join(localDir, 'faults-checkpoints-')), 'execution.checkpointing.data-inline-threshold': 0 } : {}),
        'restart-strategy.type': 'fixed-delay',
        'restart-strategy.fixed-delay.attempts': 50,
        'restart-strategy.fixed-delay.delay': 5,
      });
      env
        .fromSource(numberSource({ count: records, eventsPerSecond: 40_000 }), 'numbers')
        .process(plan.failingProcess<number>())
        .keyBy((n) => n % 11)
        .process(new CountPerKey())
        .uid('count')
        .sinkTo(plan.wrapSink(new TxnStoreSink(store)));
      const result = await env.execute();
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(3);
      expect(compareMultisets(store.committed, countReference(records, 11)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      await expect.poll(() => readdirSync(local), { timeout: 5000 }).toEqual([]);
    });
  }
});

describe('lmdb state backend: spilled snapshots of checkpoints that do not complete', () => {
  /** Keeps a 500-byte value per key: enough state that spilling it outlasts the checkpoint timeout. */
  class KeepPadded implements KeyedProcessFunction<number, number, number> {
    private value!: ValueState<string>;
    open(ctx: KeyedRuntimeContext<number>): void {
      this.value = ctx.getState(valueState<string>('padded'));
    }
    processElement(n: number, _ctx: KeyedProcessContext<number>, out: Collector<number>): void {
      this.value.update(String(n).padEnd(500, '.'));
      out.collect(n);
    }
  }

  it('leave no spill file behind: acknowledgements of expired checkpoints are dropped with their files', async () => {
    const local = mkdtempSync(join(localDir, 'expired-'));
    const checkpoints = mkdtempSync(join(localDir, 'expired-checkpoints-'));
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 2,
      'state.backend.type': 'lmdb',
      'state.backend.lmdb.localdir': local,
      'execution.checkpointing.interval': 50,
      // Expired before most subtasks acknowledge: their spilled snapshots are never written.
      'execution.checkpointing.timeout': 10,
      'execution.checkpointing.tolerable-failed-checkpoints': 1_000_000,
      'execution.checkpointing.checkpoints-after-tasks-finish': false,
      'execution.checkpointing.dir': checkpoints,
    });
    env
      .fromSource(numberSource({ count: 80_000, eventsPerSecond: 80_000 }), 'numbers')
      .keyBy((n) => n % 30_000)
      .process(new KeepPadded())
      .sinkTo(new DiscardingSink<number>(), 'discard');
    const client = env.executeAsync();
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(client.checkpoints().filter((c) => c.status === 'FAILED').length, 'checkpoints expired').toBeGreaterThan(3);
    await expect.poll(() => readdirSync(local), { timeout: 5000 }).toEqual([]);
    rmSync(checkpoints, { recursive: true, force: true });
  }, 60_000);
});
