import { describe, expect, it } from 'vitest';
import {
  OutputTag,
  valueState,
  type Collector,
  type KeyedProcessContext,
  type KeyedProcessFunction,
  type KeyedRuntimeContext,
  type OnTimerContext,
  type ProcessContext,
  type ProcessFunction,
  type ValueState,
} from '../src/index.js';
import { ProcessFunctionTestHarnesses } from '../src/testing/index.js';

interface Payment {
  readonly account: string;
  readonly amount: number;
}

/**
 * Sums payments per account; 10 s (event time) after an account's last payment it emits the
 * total and forgets it; large payments go to a side output; a processing-time timer per
 * account counts how often it was "checked" (every 60 s of processing time).
 */
const large = new OutputTag<Payment>('large');
class IdleTotal implements KeyedProcessFunction<string, Payment, string> {
  private total!: ValueState<number>;
  private deadline!: ValueState<number>;
  private checks!: ValueState<number>;
  open(ctx: KeyedRuntimeContext<string>): void {
    this.total = ctx.getState(valueState<number>('total'));
    this.deadline = ctx.getState(valueState<number>('deadline'));
    this.checks = ctx.getState(valueState<number>('checks'));
  }
  processElement(p: Payment, ctx: KeyedProcessContext<string>, out: Collector<string>): void {
    if (p.amount >= 1_000) ctx.output(large, p);
    this.total.update((this.total.value() ?? 0) + p.amount);
    const old = this.deadline.value();
    if (old !== undefined) ctx.timerService().deleteEventTimeTimer(old);
    const next = ctx.timestamp()! + 10_000;
    this.deadline.update(next);
    ctx.timerService().registerEventTimeTimer(next);
    if (this.checks.value() === undefined) {
      this.checks.update(0);
      ctx.timerService().registerProcessingTimeTimer(ctx.timerService().currentProcessingTime() + 60_000);
    }
    out.collect(`${p.account} paid ${p.amount}`);
  }
  onTimer(timestampMs: number, ctx: OnTimerContext<string>, out: Collector<string>): void {
    if (ctx.timeDomain() === 'PROCESSING_TIME') {
      this.checks.update((this.checks.value() ?? 0) + 1);
      out.collect(`${ctx.getCurrentKey()} check ${this.checks.value()} at ${timestampMs}`);
      ctx.timerService().registerProcessingTimeTimer(timestampMs + 60_000);
      return;
    }
    out.collect(`${ctx.getCurrentKey()} idle, total ${this.total.value()} at ${timestampMs}`);
    this.total.clear();
    this.deadline.clear();
  }
}

describe('ProcessFunctionTestHarnesses (Flink\'s operator test harnesses)', () => {
  it('a keyed function: records, keyed state, event-time timers on the watermark, side outputs', async () => {
    const h = await ProcessFunctionTestHarnesses.forKeyedProcessFunction(new IdleTotal(), (p: Payment) => p.account);
    h.processElement({ account: 'a', amount: 5 }, 1_000);
    h.processElement({ account: 'b', amount: 2_000 }, 2_000);
    h.processElement({ account: 'a', amount: 7 }, 4_000);
    expect(h.extractOutputValues()).toEqual(['a paid 5', 'b paid 2000', 'a paid 7']);
    expect(h.getSideOutput(large)).toEqual([{ account: 'b', amount: 2_000 }]);
    h.clearOutput();
    // b's timer (12 000) fires; a's first timer (11 000) was deleted, its second is at 14 000.
    h.processWatermark(13_000);
    expect(h.getOutput()).toEqual([
      { kind: 'record', value: 'b idle, total 2000 at 12000', timestampMs: 12_000 },
      { kind: 'watermark', watermarkMs: 13_000 },
    ]);
    h.clearOutput();
    h.processWatermark(14_000);
    expect(h.extractOutputValues()).toEqual(['a idle, total 12 at 14000']);
    await h.close();
  });

  it('processing time moves only when set: due timers fire in time order, also those registered while firing', async () => {
    const h = await ProcessFunctionTestHarnesses.forKeyedProcessFunction(new IdleTotal(), (p: Payment) => p.account, { processingTimeMs: 1_000 });
    h.processElement({ account: 'a', amount: 1 }, 0); // check timer at 61 000
    h.setProcessingTime(30_000);
    h.processElement({ account: 'b', amount: 1 }, 0); // check timer at 90 000
    h.clearOutput();
    h.setProcessingTime(60_999);
    expect(h.extractOutputValues()).toEqual([]);
    h.setProcessingTime(200_000);
    expect(h.extractOutputValues()).toEqual(['a check 1 at 61000', 'b check 1 at 90000', 'a check 2 at 121000', 'b check 2 at 150000', 'a check 3 at 181000']);
    expect(h.getProcessingTime()).toBe(200_000);
    expect(() => h.setProcessingTime(100)).toThrow('processing time cannot go back (now 200000, asked 100)');
    await h.close();
  });

  it('a snapshot restores state and timers into a new harness, as a restart does', async () => {
    const before = await ProcessFunctionTestHarnesses.forKeyedProcessFunction(new IdleTotal(), (p: Payment) => p.account);
    before.processElement({ account: 'a', amount: 5 }, 1_000);
    before.processElement({ account: 'a', amount: 6 }, 2_000);
    const snapshot = await before.snapshot();
    // What happens after the snapshot is lost with the "failure".
    before.processElement({ account: 'a', amount: 1_000_000 }, 3_000);
    await before.close();

    const after = await ProcessFunctionTestHarnesses.forKeyedProcessFunction(new IdleTotal(), (p: Payment) => p.account, { restoreFrom: snapshot });
    after.processWatermark(11_999);
    expect(after.extractOutputValues()).toEqual([]);
    after.processWatermark(12_000);
    expect(after.extractOutputValues()).toEqual(['a idle, total 11 at 12000']);
    await after.close();
  });

  it('endInput fires every event-time timer, as the end of a bounded stream does', async () => {
    const h = await ProcessFunctionTestHarnesses.forKeyedProcessFunction(new IdleTotal(), (p: Payment) => p.account);
    h.processElement({ account: 'z', amount: 3 }, 5_000);
    h.clearOutput();
    await h.endInput();
    expect(h.extractOutputValues()).toEqual(['z idle, total 3 at 15000']);
    await h.close();
    expect(() => h.processElement({ account: 'z', amount: 1 }, 0)).toThrow('harness.processElement: the harness is closed');
  });

  it('a non-keyed ProcessFunction: timestamps, a record without one, watermarks passed on', async () => {
    const fn: ProcessFunction<number, string> = {
      processElement(n: number, ctx: ProcessContext, out: Collector<string>) {
        out.collect(`${n}@${ctx.timestamp() ?? 'none'} wm ${ctx.timerService().currentWatermark()}`);
      },
    };
    const h = await ProcessFunctionTestHarnesses.forProcessFunction(fn);
    h.processElement(1, 100);
    h.processWatermark(150);
    h.processElement(2);
    expect(h.getOutput()).toEqual([
      { kind: 'record', value: '1@100 wm -9007199254740991', timestampMs: 100 },
      { kind: 'watermark', watermarkMs: 150 },
      { kind: 'record', value: '2@none wm 150', timestampMs: undefined },
    ]);
    await h.close();
  });

  it('a keyed snapshot restored into a non-keyed harness is refused naming the fix', async () => {
    const keyed = await ProcessFunctionTestHarnesses.forKeyedProcessFunction(new IdleTotal(), (p: Payment) => p.account);
    keyed.processElement({ account: 'a', amount: 1 }, 0);
    const snapshot = await keyed.snapshot();
    await keyed.close();
    const fn: ProcessFunction<number, number> = { processElement: (n, _ctx, out) => out.collect(n) };
    await expect(ProcessFunctionTestHarnesses.forProcessFunction(fn, { restoreFrom: snapshot })).rejects.toThrow(
      'the snapshot holds keyed state, but this harness has no key selector: restore it into forKeyedProcessFunction',
    );
  });
});
