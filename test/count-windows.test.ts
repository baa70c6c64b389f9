// Count windows (Flink's countWindow): tumbling and sliding, reduce / aggregate / process,
// compared with windows computed here; exactly-once through failures.
import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment, type AggregateFunction } from '../src/index.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { ExactlyOnceFileSink, readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { FaultPlan } from '../src/testing/fault-plan.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { tempDirs } from './support/temp-dirs.js';
import { failoverConfig } from './support/failover-config.js';

const tempDir = tempDirs('sluice-count-windows-');
const KEYS = 5;

/** Independent reference: per key (n % KEYS, records in order), the windows every `slide` records over the last `size`. */
function windows(records: number, size: number, slide: number): Map<number, number[][]> {
  const out = new Map<number, number[][]>();
  const seen = new Map<number, number[]>();
  for (let n = 0; n < records; n++) {
    const k = n % KEYS;
    const list = seen.get(k) ?? [];
    list.push(n);
    seen.set(k, list);
    if (list.length % slide === 0) {
      const w = out.get(k) ?? [];
      w.push(list.slice(Math.max(0, list.length - size)));
      out.set(k, w);
    }
  }
  return out;
}

const flat = (m: Map<number, number[][]>, f: (k: number, w: number[]) => string): string[] => [...m].flatMap(([k, ws]) => ws.map((w) => f(k, w)));

async function run(env: StreamExecutionEnvironment): Promise<void> {
  expect((await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run()).status).toBe('FINISHED');
}

describe('count windows', () => {
  it('tumbling: a sum per 3 records of a key; a key\'s last records that do not fill a window are not emitted', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<[number, number]>();
    env
      .fromSource(numberSource({ count: 103 }), 'numbers')
      .setParallelism(1)
      .map((n): [number, number] => [n % KEYS, n])
      // One producer before the keyBy: each key's records stay in order.
      .setParallelism(1)
      .keyBy((t) => t[0])
      .countWindow(3)
      .sum(1)
      .sinkTo(sink);
    await run(env);
    const want = flat(windows(103, 3, 3), (k, w) => `${k}:${w.reduce((a, b) => a + b, 0)}`);
    expect(sink.values.map(([k, s]) => `${k}:${s}`).sort()).toEqual(want.sort());
    // 103 records over 5 keys: 20 or 21 each, so 6 or 7 full windows per key, and a remainder.
    expect(sink.values.length).toBe(want.length);
  });

  it('sliding: the last 4 records of a key every 2 records, to a process function with the key', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 3 });
    const sink = new CollectSink<string>();
    env
      .fromSource(numberSource({ count: 200 }), 'numbers')
      .setParallelism(1)
      .keyBy((n) => n % KEYS)
      .countWindow(4, 2)
      .process<string>({
        process(key, ctx, elements, out) {
          out.collect(`${key}:${elements.join(',')}:${ctx.window.end === Number.MAX_SAFE_INTEGER}`);
        },
      })
      .sinkTo(sink);
    await run(env);
    expect([...sink.values].sort()).toEqual(flat(windows(200, 4, 2), (k, w) => `${k}:${w.join(',')}:true`).sort());
    // The first window of a key has 2 records, every later one 4.
    expect(sink.values.some((v) => v.split(':')[1]!.split(',').length === 2)).toBe(true);
  });

  it('aggregate (tumbling) and reduce (sliding)', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const avg = new CollectSink<number>();
    const max = new CollectSink<number>();
    const mean: AggregateFunction<number, [number, number], number> = {
      createAccumulator: () => [0, 0],
      add: (n, [s, c]) => [s + n, c + 1],
      getResult: ([s, c]) => s / c,
      merge: (a, b) => [a[0] + b[0], a[1] + b[1]],
    };
    const keyed = env.fromSource(numberSource({ count: 300 }), 'numbers').setParallelism(1).keyBy((n) => n % KEYS);
    keyed.countWindow(4).aggregate(mean).sinkTo(avg);
    keyed.countWindow(5, 3).reduce((a, b) => Math.max(a, b)).sinkTo(max);
    await run(env);
    expect([...avg.values].sort((a, b) => a - b)).toEqual(flat(windows(300, 4, 4), (_k, w) => String(w.reduce((a, b) => a + b, 0) / w.length)).map(Number).sort((a, b) => a - b));
    expect([...max.values].sort((a, b) => a - b)).toEqual(flat(windows(300, 5, 3), (_k, w) => String(Math.max(...w))).map(Number).sort((a, b) => a - b));
  });

  it('>= 5 injected failures with checkpoints: every window once, with the same records (tumbling and sliding)', { timeout: 60_000 }, async () => {
    for (const [size, slide] of [
      [7, 7],
      [6, 4],
    ] as const) {
      const out = tempDir();
      const records = 6_000;
      const plan = FaultPlan.seeded({ seed: 7500 + size, recordFaults: 5, recordRange: records });
      const env = StreamExecutionEnvironment.create(failoverConfig(2));
      env
        .fromSource(numberSource({ count: records, eventsPerSecond: 20_000 }), 'numbers')
        .setParallelism(1)
        .uid('numbers')
        .process(plan.failingProcess<number>())
        .setParallelism(1)
        .uid('faults')
        .keyBy((n) => n % KEYS)
        .countWindow(size, slide)
        .process<string>({ process: (key, _ctx, elements, o) => o.collect(`${key}:${elements.join(',')}`) })
        .uid('windows')
        .sinkTo(new ExactlyOnceFileSink<string>(out))
        .uid('sink');
      const result = await new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} }).run();
      expect(result.status, plan.describe()).toBe('FINISHED');
      expect(result.numRestarts, plan.describe()).toBeGreaterThanOrEqual(5);
      const want = flat(windows(records, size, slide), (k, w) => `${k}:${w.join(',')}`);
      expect(compareMultisets(await readCommittedLines(out), want), `${plan.describe()}, countWindow(${size}, ${slide})`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    }
  });

  it('sizes and slides are whole numbers of records >= 1', () => {
    const keyed = StreamExecutionEnvironment.create().fromElements(1).keyBy((n) => n);
    expect(() => keyed.countWindow(0)).toThrow(/countWindow: the size must be a whole number of records >= 1, got 0/);
    expect(() => keyed.countWindow(5, 1.5)).toThrow(/the slide must be a whole number of records >= 1, got 1.5/);
  });
});
