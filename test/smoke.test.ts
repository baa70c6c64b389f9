import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';

describe('smoke', () => {
  it('runs map/filter and a keyed reduce', async () => {
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<[string, number]>();
    env
      .fromElements(...Array.from({ length: 1000 }, (_, i) => i))
      .map((n) => n * 2)
      .filter((n) => n % 3 !== 0)
      .map((n): [string, number] => [`k${n % 7}`, 1])
      .keyBy((t) => t[0])
      .reduce((a, b) => [a[0], a[1] + b[1]])
      .sinkTo(sink);
    await env.execute();
    const last = new Map<string, number>();
    for (const [k, c] of sink.values) last.set(k, c);
    let expected = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const n = i * 2;
      if (n % 3 === 0) continue;
      const k = `k${n % 7}`;
      expected.set(k, (expected.get(k) ?? 0) + 1);
    }
    expect(Object.fromEntries(last)).toEqual(Object.fromEntries(expected));
  });
});

describe('enableCheckpointing', () => {
  it('takes an interval and mode, or the camelCase options, and rejects unknown ones', () => {
    const env = StreamExecutionEnvironment.create();
    env.enableCheckpointing(500, 'AT_LEAST_ONCE');
    expect(env.config.get('execution.checkpointing.interval')).toBe(500);
    expect(env.config.get('execution.checkpointing.mode')).toBe('AT_LEAST_ONCE');
    env.enableCheckpointing({ interval: '2 s', minPause: 100, unaligned: true, alignedCheckpointTimeout: '50 ms', numRetained: 3, dataInlineThreshold: '1 kb' });
    expect(env.config.get('execution.checkpointing.interval')).toBe(2000);
    expect(env.config.get('execution.checkpointing.min-pause')).toBe(100);
    expect(env.config.get('execution.checkpointing.unaligned.enabled')).toBe(true);
    expect(env.config.get('execution.checkpointing.aligned-checkpoint-timeout')).toBe(50);
    expect(env.config.get('execution.checkpointing.num-retained')).toBe(3);
    expect(env.config.get('execution.checkpointing.data-inline-threshold')).toBe(1024);
    expect(() => env.enableCheckpointing({ intervall: 1 } as never)).toThrow(/unknown checkpointing option 'intervall'/);
  });

  it('takes the interval as text, and names a value that is not one as it is', () => {
    const env = StreamExecutionEnvironment.create();
    // A string was taken for an object of options, its characters for option names ('0').
    env.enableCheckpointing('10 s', 'EXACTLY_ONCE');
    expect(env.config.get('execution.checkpointing.interval')).toBe(10_000);
    // NaN and Infinity were shown as JSON's null.
    expect(() => env.enableCheckpointing(Number.NaN)).toThrow(/^invalid value NaN for 'execution\.checkpointing\.interval': must be a number of milliseconds >= 0/);
    expect(() => env.enableCheckpointing(Number.POSITIVE_INFINITY)).toThrow(/^invalid value Infinity for 'execution\.checkpointing\.interval'/);
    expect(() => env.enableCheckpointing('soon')).toThrow(/^invalid value "soon" for 'execution\.checkpointing\.interval'/);
    expect(() => env.setParallelism(Number.NaN)).toThrow(/^invalid value NaN for 'parallelism\.default': expected an integer/);
    expect(() => env.enableCheckpointing(null as never)).toThrow(/^enableCheckpointing takes an interval \(milliseconds, or text such as '10 s'\) or an object of checkpointing options, got null/);
    expect(() => env.enableCheckpointing([1000] as never)).toThrow(/got \[1000\]/);
  });
});
