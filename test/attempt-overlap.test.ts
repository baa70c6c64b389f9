import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { Sink, SinkWriter } from '../src/api/sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { FaultPlan } from '../src/testing/fault-plan.js';

/**
 * A restarted attempt must not overlap the failed one: every operator of the failed attempt
 * has closed (with what it still had running) before an operator of the next attempt opens.
 * A sink writer left running acts on the external system alongside its successor: a Kafka
 * writer's late InitProducerId fenced the next attempt's pre-committed transaction of the same
 * transactional id, which the completed checkpoint then could never commit.
 */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A sink that logs its writers' lifecycle; opening (in `slowCreateInAttempt`) and closing take a while. */
function lifecycleSink(events: string[], o: { closeMs: number; slowCreateInAttempt?: number; createMs?: number }): Sink<number> {
  return {
    createWriter: async (ctx) => {
      const who = `a${ctx.attemptNumber}s${ctx.subtaskIndex}`;
      events.push(`create-start ${who}`);
      if (ctx.attemptNumber === o.slowCreateInAttempt) await sleep(o.createMs ?? 0);
      events.push(`create-end ${who}`);
      const writer: SinkWriter<number> = {
        write: () => {},
        close: async () => {
          events.push(`close-start ${who}`);
          await sleep(o.closeMs);
          events.push(`close-end ${who}`);
        },
      };
      return writer;
    },
  };
}

/** Each creation of a writer that came before a writer of an earlier attempt had closed (empty: no overlap). */
function overlaps(events: readonly string[]): string[] {
  const writers = events.flatMap((e) => /^create-end (a(\d+)s\d+)$/.exec(e)?.slice(1, 3) ?? []);
  const created = new Map<string, number>();
  for (let i = 0; i < writers.length; i += 2) created.set(writers[i]!, Number(writers[i + 1]));
  const out: string[] = [];
  events.forEach((e, i) => {
    const m = /^create-start a(\d+)s\d+$/.exec(e);
    if (m === null) return;
    for (const [writer, attempt] of created) {
      if (attempt >= Number(m[1])) continue;
      const closedAt = events.indexOf(`close-end ${writer}`);
      if (closedAt < 0 || closedAt > i) out.push(`${e} before close-end ${writer}`);
    }
  });
  return out;
}

/** Checkpoints every 20 ms, up to 3 restarts 1 ms apart. */
function restartingEnv(parallelism: number, more: Record<string, number> = {}): StreamExecutionEnvironment {
  return StreamExecutionEnvironment.create({
    'parallelism.default': parallelism,
    'execution.checkpointing.interval': 20,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 3,
    'restart-strategy.fixed-delay.delay': 1,
    ...more,
  });
}

describe('restarts wait for the failed attempt to close', () => {
  it('a failed attempt: its sink writers are closed (slow close) before the next attempt creates its writers', async () => {
    const events: string[] = [];
    const plan = new FaultPlan(0, [{ kind: 'record', afterRecords: 30 }]);
    const env = restartingEnv(2);
    env
      .fromSource(numberSource({ count: 200, eventsPerSecond: 2_000 }), 'numbers')
      .process(plan.failingProcess<number>())
      .rebalance()
      .sinkTo(lifecycleSink(events, { closeMs: 150 }));
    const result = await env.executeAsync(undefined, { log: () => {} }).result;
    expect(result.numRestarts).toBe(1);
    expect(events.filter((e) => e.startsWith('close-end a0'))).toHaveLength(2);
    expect(overlaps(events), events.join('\n')).toEqual([]);
  });

  it('an attempt that fails while a sink writer is still being created: that writer is closed once created, before the next attempt starts', async () => {
    const events: string[] = [];
    const env = restartingEnv(1);
    env
      .fromSource(numberSource({ count: 50 }), 'numbers')
      .process<number>({
        open: (ctx) => {
          if (ctx.attemptNumber === 0) throw new Error('injected open failure');
        },
        processElement: (n, _ctx, out) => out.collect(n),
      })
      .rebalance()
      .sinkTo(lifecycleSink(events, { closeMs: 50, slowCreateInAttempt: 0, createMs: 200 }));
    const result = await env.executeAsync(undefined, { log: () => {} }).result;
    expect(result.numRestarts).toBe(1);
    // The writer whose creation was under way when the attempt failed is closed, not leaked.
    expect(events).toContain('close-end a0s0');
    expect(overlaps(events), events.join('\n')).toEqual([]);
  });

  it('a writer whose close does not end within task.cancellation.timeout fails the job instead of restarting alongside it', async () => {
    const events: string[] = [];
    const plan = new FaultPlan(0, [{ kind: 'record', afterRecords: 30 }]);
    const env = restartingEnv(1, { 'task.cancellation.timeout': 300 });
    env
      .fromSource(numberSource({ count: 200, eventsPerSecond: 2_000 }), 'numbers')
      .process(plan.failingProcess<number>())
      .sinkTo({
        createWriter: (ctx) => {
          events.push(`create-start a${ctx.attemptNumber}s${ctx.subtaskIndex}`);
          return { write: () => {}, close: () => stuckClose };
        },
      });
    let release!: () => void;
    const stuckClose = new Promise<void>((r) => (release = r));
    const started = Date.now();
    const failure = await env.executeAsync(undefined, { log: () => {} }).result.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(failure?.message).toMatch(/not restarted: task\(s\) .+ did not close within task\.cancellation\.timeout \(300 ms\)/);
    expect(failure?.message).toMatch(/injected/); // the failure that started it is named too
    expect(Date.now() - started).toBeLessThan(30_000); // did not wait for the close (it never ends)
    // No writer of a second attempt was created.
    expect(events.filter((e) => e.startsWith('create-start a1'))).toEqual([]);
    expect(events).toContain('create-start a0s0');
    release();
  });
});
