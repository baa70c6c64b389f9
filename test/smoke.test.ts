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
});
