// Broadcast state (Flink's broadcast state pattern): rules broadcast to every subtask of a
// keyed operator, applied to the keyed records; the state survives failures (the rules are
// not sent again: only the checkpoint has them) and a restore at another parallelism.
import { describe, expect, it } from 'vitest';
import {
  broadcastState,
  mapState,
  StreamExecutionEnvironment,
  WatermarkStrategy,
  type KeyedBroadcastProcessFunction,
  type KeyedRuntimeContext,
  type MapState,
  type ValueState,
  valueState,
} from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets } from './support/txn-store-sink.js';
import type { Source, SourceReader } from '../src/api/source.js';
import { tempDirs } from './support/temp-dirs.js';
import { failoverConfig } from './support/failover-config.js';

const KEYS = 7;
const RULES = broadcastState<string, number>('rules');
const tempDir = tempDirs('sluice-broadcast-');

/**
 * Records wait in keyed state for the watermark: the operator's watermark is the lower of its
 * inputs', and the rules' input moves on only after its rules, so every record is computed
 * with all rules whatever the order in which the two inputs arrive.
 */
class ApplyRules implements KeyedBroadcastProcessFunction<number, number, [string, number], string> {
  private pending!: MapState<number, number>;
  open(ctx: KeyedRuntimeContext<number>): void {
    this.pending = ctx.getMapState(mapState<number, number>('pending'));
  }
  processElement(n: number, ctx: Parameters<KeyedBroadcastProcessFunction<number, number, [string, number], string>['processElement']>[1]): void {
    this.pending.put(n, n);
    ctx.timerService().registerEventTimeTimer(n);
  }
  processBroadcastElement(rule: [string, number], ctx: Parameters<KeyedBroadcastProcessFunction<number, number, [string, number], string>['processBroadcastElement']>[1]): void {
    ctx.getBroadcastState(RULES).put(rule[0], rule[1]);
  }
  onTimer(t: number, ctx: Parameters<NonNullable<KeyedBroadcastProcessFunction<number, number, [string, number], string>['onTimer']>>[1], out: { collect(s: string): void }): void {
    const n = this.pending.get(t);
    if (n === undefined) return;
    this.pending.remove(t);
    const rules = ctx.getBroadcastState(RULES);
    out.collect(`${ctx.getCurrentKey()}:${n}:${n * rules.get('mult')! + rules.get('add')!}`);
  }
}

function reference(records: number): string[] {
  return Array.from({ length: records }, (_, n) => `${n % KEYS}:${n}:${n * 3 + 5}`);
}

interface JobOptions {
  readonly parallelism: number;
  readonly records: number;
  readonly eventsPerSecond: number;
  readonly out: string;
  readonly plan?: FaultPlan;
}

function job(o: JobOptions): StreamExecutionEnvironment {
  const env = StreamExecutionEnvironment.create({
    ...failoverConfig(o.parallelism),
    'pipeline.auto-watermark-interval': 5,
  });
  const rules = env
    .fromElements<[string, number]>(['mult', 3], ['add', 5])
    .uid('rules')
    .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<[string, number]>().withTimestampAssigner(() => 0))
    .uid('rule-times')
    .broadcast(RULES);
  let numbers = env.fromSource(numberSource({ count: o.records, eventsPerSecond: o.eventsPerSecond }), 'numbers').uid('numbers');
  if (o.plan !== undefined) numbers = numbers.process(o.plan.failingProcess<number>()).uid('faults');
  numbers
    .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n))
    .uid('times')
    .keyBy((n) => n % KEYS)
    .connect(rules)
    .process(new ApplyRules())
    .uid('apply')
    .sinkTo(new ExactlyOnceFileSink<string>(o.out))
    .uid('sink');
  return env;
}

describe('broadcast state', () => {
  it('rules broadcast to a keyed operator: every record once, computed with every rule', { timeout: 30_000 }, async () => {
    const out = tempDir();
    const env = job({ parallelism: 3, records: 5_000, eventsPerSecond: 50_000, out });
    expect((await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).status).toBe('FINISHED');
    expect(compareMultisets(await readCommittedLines(out), reference(5_000))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('>= 5 injected failures: the rules come back from the checkpoint (their source does not send them again); exactly once', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 8_000;
    const plan = FaultPlan.seeded({ seed: 7100, recordFaults: 5, recordRange: records });
    const env = job({ parallelism: 2, records, eventsPerSecond: 20_000, out, plan });
    const result = await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run();
    expect(result.status, plan.describe()).toBe('FINISHED');
    expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
    expect(compareMultisets(await readCommittedLines(out), reference(records)), plan.describe()).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('restored from a savepoint at parallelism 2 -> 3: the new subtask gets a copy; exactly once', { timeout: 60_000 }, async () => {
    const out = tempDir();
    const records = 20_000;
    const first = job({ parallelism: 2, records, eventsPerSecond: 10_000, out });
    const a = new LocalExecutor(first.getJobGraph(), first.config, { log: () => {} });
    const done = a.run();
    while (a.checkpointStats.counts.completed < 3) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await a.stopWithSavepoint(tempDir(), false);
    expect((await done).status).toBe('FINISHED');
    expect((await readCommittedLines(out)).length).toBeLessThan(records);
    const second = job({ parallelism: 3, records, eventsPerSecond: 200_000, out });
    const b = new LocalExecutor(second.getJobGraph(), second.config, { log: () => {}, restoreFrom: { path: savepoint.pointer, allowNonRestoredState: false } });
    expect((await b.run()).status).toBe('FINISHED');
    expect(compareMultisets(await readCommittedLines(out), reference(records))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });

  it('on a stream without keys (BroadcastProcessFunction): every subtask gets every broadcast record and keeps its own copy', { timeout: 30_000 }, async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<string>();
    const rules = env.fromElements<[string, number]>(['mult', 3], ['add', 5]).setParallelism(1).broadcast(RULES);
    env
      .fromElements(1)
      .connect(rules)
      .process<string>({
        processElement: () => {},
        processBroadcastElement(rule, ctx, out) {
          const state = ctx.getBroadcastState(RULES);
          state.put(rule[0], rule[1]);
          out.collect(`${rule[0]}:${state.size}`);
        },
      })
      .sinkTo(sink);
    expect((await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).status).toBe('FINISHED');
    // Three subtasks, each sees both rules in the order they were sent.
    expect([...sink.values].sort()).toEqual(['add:2', 'add:2', 'add:2', 'mult:1', 'mult:1', 'mult:1']);
  });

  it('is read-only for the keyed input, and must be declared on the broadcast stream; errors say so', async () => {
    const run = async (write: boolean, declared: boolean): Promise<unknown> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'restart-strategy.type': 'none' });
      const other = broadcastState<string, number>('other');
      const rules = env.fromElements<[string, number]>(['mult', 3]).broadcast(declared ? RULES : other);
      env
        .fromElements(1, 2)
        .keyBy((n) => n)
        .connect(rules)
        .process<string>({
          processElement: (n, ctx) => {
            const s = ctx.getBroadcastState(RULES) as unknown as { put(k: string, v: number): void };
            if (write) s.put('x', n);
          },
          processBroadcastElement: () => {},
        })
        .sinkTo(new ExactlyOnceFileSink<string>(tempDir()));
      return new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run();
    };
    await expect(run(true, true)).rejects.toThrow(/broadcast state 'rules' is read-only in processElement: only processBroadcastElement writes it/);
    await expect(run(false, false)).rejects.toThrow(/broadcast state 'rules' was not declared on the broadcast stream of operator .*: pass its descriptor to broadcast\(\.\.\.\)/);
    expect(() => StreamExecutionEnvironment.create().fromElements(1).broadcast(RULES, RULES)).toThrow(/the broadcast state 'rules' is given twice/);
  });

  for (const backend of ['hashmap', 'lmdb']) {
    it(`applyToKeyedState goes through every key's state and may update or clear it (${backend})`, { timeout: 30_000 }, async () => {
      // The commands are sent only once the keyed input was processed (the job runs in this
      // process: a shared counter says so), so what they see does not depend on timing.
      const RECORDS = 300;
      const KEYS_N = 12;
      let processed = 0;
      const commands = new GatedSource<[string, number]>([['scale', 10], ['drop-below', 37_000]], () => processed === RECORDS);
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3, 'state.backend.type': backend });
      const totals = valueState<number>('total');
      const sink = new CollectSink<string>();
      const bc = env.fromSource(commands, 'commands').setParallelism(1).broadcast(RULES);
      env
        .fromSource(numberSource({ count: RECORDS }), 'numbers')
        .keyBy((n) => n % KEYS_N)
        .connect(bc)
        .process(new Totals(totals, () => processed++))
        .sinkTo(sink);
      expect((await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).status).toBe('FINISHED');
      const sums = Array.from({ length: KEYS_N }, (_, k) => Array.from({ length: RECORDS }, (_, n) => n).filter((n) => n % KEYS_N === k).reduce((a, b) => a + b, 0));
      const want = [
        ...sums.map((t, k) => `scale ${k} ${t * 10}`),
        // Each subtask goes through its own keys: every key once, the cleared ones too.
        ...sums.map((t, k) => `drop-below ${k} ${t * 10 < 37_000 ? 'cleared' : t * 10}`),
      ];
      expect([...sink.values].sort()).toEqual(want.sort());
    });
  }
});

/** A running total per key; broadcast commands scale every total, or clear the small ones. */
class Totals implements KeyedBroadcastProcessFunction<number, number, [string, number], string> {
  private total!: ValueState<number>;
  constructor(
    private readonly descriptor: ReturnType<typeof valueState<number>>,
    private readonly onRecord: () => void,
  ) {}
  open(ctx: KeyedRuntimeContext<number>): void {
    this.total = ctx.getState(this.descriptor);
  }
  processElement(n: number): void {
    this.total.update((this.total.value() ?? 0) + n);
    this.onRecord();
  }
  processBroadcastElement([command, arg]: [string, number], ctx: Parameters<KeyedBroadcastProcessFunction<number, number, [string, number], string>['processBroadcastElement']>[1], out: { collect(s: string): void }): void {
    ctx.applyToKeyedState(this.descriptor, (key, state) => {
      if (command === 'scale') state.update(state.value()! * arg);
      else if (state.value()! < arg) state.clear();
      out.collect(`${command} ${key} ${state.value() ?? 'cleared'}`);
    });
  }
}

/** Emits its items only once `ready()` says so (one subtask). */
class GatedSource<T> implements Source<T, { id: string }> {
  readonly boundedness = 'bounded' as const;
  constructor(
    private readonly items: readonly T[],
    private readonly ready: () => boolean,
  ) {}
  createSplits(): { id: string }[] {
    return [{ id: 'gated' }];
  }
  createReader(): SourceReader<T, { id: string }> {
    const { items, ready } = this;
    let mine = false;
    let i = 0;
    return {
      addSplits(splits) {
        if (splits.length > 0) mine = true;
      },
      noMoreSplits() {},
      pollNext(out) {
        if (!mine || i === items.length) return 'end';
        if (!ready()) return 'nothing';
        out.collect(items[i++]!);
        return 'more';
      },
      isAvailable: () => new Promise<void>((resolve) => setTimeout(resolve, 2)),
      snapshotState: () => [],
    };
  }
}
