import { describe, expect, it } from 'vitest';
import { WatermarkStrategy } from '../../api/watermark-strategy.js';
import { MAX_WATERMARK } from '../channel/stream-element.js';
import { OperatorOutput, type RecordSink } from './output.js';
import { SourceWatermarks } from './source-watermarks.js';

type Emitted = ['record', unknown, number] | ['watermark', number] | ['idle', boolean];

function harness(strategy: WatermarkStrategy<unknown>) {
  const emitted: Emitted[] = [];
  const sink: RecordSink = {
    push: (v, t) => void emitted.push(['record', v, t]),
    pushWatermark: (w) => void emitted.push(['watermark', w]),
    pushWatermarkStatus: (idle) => void emitted.push(['idle', idle]),
  };
  let now = 0;
  const out = new SourceWatermarks(new OperatorOutput(sink, new Map()), strategy, () => now, 'test source');
  const watermarks = () => emitted.filter((e) => e[0] === 'watermark').map((e) => e[1]);
  return { out, emitted, watermarks, advance: (ms: number) => (now += ms) };
}

describe('SourceWatermarks: watermarks per split, the subtask emits the least', () => {
  it('a split that lags holds the watermark back; it moves on as the split catches up', () => {
    const h = harness(WatermarkStrategy.forBoundedOutOfOrderness(0));
    const a = h.out.createOutputForSplit('p0');
    const b = h.out.createOutputForSplit('p1');
    a.collect('a1', 10_000);
    b.collect('b1', 1_000);
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([999]);
    a.collect('a2', 20_000);
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([999]); // p1 still at 1 s
    b.collect('b2', 15_000);
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([999, 14_999]);
    // The records went through with their timestamps, in the order they were emitted.
    expect(h.emitted.filter((e) => e[0] === 'record')).toEqual([
      ['record', 'a1', 10_000],
      ['record', 'b1', 1_000],
      ['record', 'a2', 20_000],
      ['record', 'b2', 15_000],
    ]);
  });

  it('a split registered but without records yet holds the watermark at its start', () => {
    const h = harness(WatermarkStrategy.forBoundedOutOfOrderness(0));
    h.out.createOutputForSplit('p0').collect('x', 5_000);
    h.out.createOutputForSplit('p1');
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([]);
    h.out.releaseOutputForSplit('p1');
    expect(h.watermarks()).toEqual([4_999]);
  });

  it('the main output counts as one more split from its first record on', () => {
    const h = harness(WatermarkStrategy.forBoundedOutOfOrderness(100));
    h.out.createOutputForSplit('p0').collect('x', 5_000);
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([4_899]);
    h.out.collect('y', 9_000);
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([4_899]); // the main output's 8,899 is ahead of p0's 4,899
  });

  it('the watermark never goes back, also when a split that starts behind is added', () => {
    const h = harness(WatermarkStrategy.forBoundedOutOfOrderness(0));
    h.out.createOutputForSplit('p0').collect('x', 5_000);
    h.out.onPeriodicEmit();
    const late = h.out.createOutputForSplit('p1');
    late.collect('y', 1_000);
    h.out.onPeriodicEmit();
    h.out.createOutputForSplit('p0').collect('z', 8_000);
    late.collect('w', 6_000);
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([4_999, 5_999]);
  });

  it('withIdleness: a split that went quiet stops holding the watermark; all quiet makes the subtask idle; a record makes it active', () => {
    const h = harness(WatermarkStrategy.forBoundedOutOfOrderness(0).withIdleness(1_000));
    const a = h.out.createOutputForSplit('p0');
    const b = h.out.createOutputForSplit('p1');
    a.collect('a', 2_000);
    b.collect('b', 1_000);
    h.out.onPeriodicEmit();
    h.advance(600);
    a.collect('a', 3_000);
    h.advance(600); // p1 quiet for 1.2 s, p0 for 0.6 s
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([999, 2_999]);
    h.advance(1_000);
    h.out.onPeriodicEmit();
    expect(h.emitted.at(-1)).toEqual(['idle', true]);
    b.collect('b', 4_000);
    expect(h.emitted.slice(-2)).toEqual([
      ['record', 'b', 4_000],
      ['idle', false],
    ]);
    h.out.onPeriodicEmit();
    expect(h.watermarks().at(-1)).toBe(3_999);
  });

  it('a subtask without any split (more subtasks than partitions) becomes idle after the idleness timeout, and active with its first record', () => {
    const h = harness(WatermarkStrategy.forBoundedOutOfOrderness(0).withIdleness(1_000));
    h.advance(500);
    h.out.onPeriodicEmit();
    expect(h.emitted).toEqual([]);
    h.advance(500);
    h.out.onPeriodicEmit();
    expect(h.emitted).toEqual([['idle', true]]);
    h.out.createOutputForSplit('p0').collect('x', 5_000);
    h.out.onPeriodicEmit();
    expect(h.emitted.slice(1)).toEqual([
      ['record', 'x', 5_000],
      ['idle', false],
      ['watermark', 4_999],
    ]);
  });

  it('without an idleness timeout, a subtask without splits never declares itself idle (Flink: lower the parallelism or add one)', () => {
    const h = harness(WatermarkStrategy.forBoundedOutOfOrderness(0));
    h.advance(60_000);
    h.out.onPeriodicEmit();
    expect(h.emitted).toEqual([]);
  });

  it('a generator that emits on events moves the watermark at once', () => {
    const h = harness(
      WatermarkStrategy.forGenerator<unknown>(() => ({
        onEvent: (e, t, out) => {
          if (e === 'mark') out.emitWatermark(t);
        },
        onPeriodicEmit: () => {},
      })),
    );
    h.out.createOutputForSplit('p0').collect('mark', 7_000);
    expect(h.watermarks()).toEqual([7_000]);
  });

  it('the timestamp assigner, checked; the end of input emits the final watermark and nothing after it', () => {
    const h = harness(WatermarkStrategy.forMonotonousTimestamps<unknown>().withTimestampAssigner((e) => (e as { t: number }).t));
    h.out.createOutputForSplit('p0').collect({ t: 42 }, 1);
    expect(h.emitted[0]).toEqual(['record', { t: 42 }, 42]);
    expect(() => h.out.createOutputForSplit('p0').collect({ t: 1.5 })).toThrow(/operator 'test source': the timestamp assigner returned 1.5.*Math.floor/);
    h.out.endOfInput();
    h.out.createOutputForSplit('p0').collect({ t: 100 });
    h.out.onPeriodicEmit();
    expect(h.watermarks()).toEqual([MAX_WATERMARK]);
  });
});
