// Mistakes in job code that used to crash the process, hang, lose records silently or blame the
// wrong operator: each now fails the job with a message that names the operator and the fix.
import { describe, expect, it } from 'vitest';
import { AsyncDataStream, OutputTag, StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy, mapState, valueState, type MapState, type ValueState } from '../src/index.js';
import type { InputStatus, Source } from '../src/api/source.js';
import { CollectSink } from '../src/connectors/index.js';

/** Runs the job built by `build` without restarts; the failure's message, or 'FINISHED'. */
async function outcome(build: (env: StreamExecutionEnvironment) => void): Promise<string> {
  const env = StreamExecutionEnvironment.create({ 'restart-strategy.type': 'none' });
  build(env);
  try {
    const result = await env.executeAsync(undefined, { log: () => {} }).result;
    return result.status;
  } catch (e) {
    return (e as Error).message;
  }
}

/** A source whose reader does `poll` (records 1, 2, 3 first, with `timestampMs` when given). */
function source(poll: (n: number) => InputStatus | 'yes', timestampMs?: number): Source<number, number> {
  return {
    boundedness: 'bounded',
    createSplits: () => [0],
    createReader: () => {
      let n = 0;
      return {
        addSplits: () => {},
        noMoreSplits: () => {},
        pollNext: (out) => {
          n++;
          if (n <= 3) {
            out.collect(n, timestampMs);
            return 'more';
          }
          return poll(n) as InputStatus;
        },
        isAvailable: () => Promise.resolve(),
        snapshotState: () => [],
      };
    },
  };
}

describe('mistakes in job code', () => {
  it('a thrown string, undefined or object without a prototype fails the job naming the operator (a null-prototype object crashed the process)', async () => {
    for (const [what, value] of [
      ['a string', 'bad input'],
      ['undefined', undefined],
      ['an object without a prototype', Object.create(null) as unknown],
    ] as const) {
      const message = await outcome((env) =>
        env
          .fromElements(1, 2)
          .map((): number => {
            throw value;
          })
          .name('Thrower')
          .sinkTo(new CollectSink<number>()),
      );
      expect(message, what).toMatch(/operator 'Thrower' .*failed: a non-Error value was thrown: .*throw an Error to get a stack trace/);
    }
  });

  it('an async processElement, flatMap or filter fails the job naming AsyncDataStream (a rejection crashed the process; records after an await were lost)', async () => {
    const asyncProcess = await outcome((env) =>
      env
        .fromElements(1, 2)
        .process<number>({
          processElement: (async () => {
            await Promise.resolve();
            throw new Error('never seen');
          }) as never,
        })
        .name('AsyncProcess')
        .sinkTo(new CollectSink<number>()),
    );
    expect(asyncProcess).toMatch(/operator 'AsyncProcess' .*the processElement function returned a promise .*AsyncDataStream\.orderedWait/);
    const asyncFlatMap = await outcome((env) =>
      env
        .fromElements(1, 2)
        .flatMap((async (n: number, out: { collect(v: number): void }) => {
          await new Promise((r) => setTimeout(r, 5));
          out.collect(n);
        }) as never)
        .name('AsyncFlatMap')
        .sinkTo(new CollectSink<unknown>()),
    );
    expect(asyncFlatMap).toMatch(/operator 'AsyncFlatMap' .*the flatMap function returned a promise/);
    const asyncFilter = await outcome((env) =>
      env
        .fromElements(1, 2)
        .filter((async () => false) as never)
        .name('AsyncFilter')
        .sinkTo(new CollectSink<number>()),
    );
    expect(asyncFilter).toMatch(/operator 'AsyncFilter' .*the filter function returned a promise/);
  });

  it('a map that returns undefined (a missing return) or a promise fails the job; a filter keeps truthy values', async () => {
    const missingReturn = await outcome((env) =>
      env
        .fromElements(1, 2)
        .map(((n: number) => {
          void n;
        }) as never)
        .name('NoReturn')
        .sinkTo(new CollectSink<unknown>()),
    );
    expect(missingReturn).toMatch(/operator 'NoReturn' .*the map function returned undefined, which cannot be a record; return a value \(a missing return statement\?\)/);
    const promise = await outcome((env) =>
      env
        .fromElements(1, 2)
        .map(async (n) => n * 2)
        .name('AsyncMap')
        .sinkTo(new CollectSink<Promise<number>>()),
    );
    expect(promise).toMatch(/operator 'AsyncMap' .*the map function returned a promise/);
    const sink = new CollectSink<number>();
    expect(
      await outcome((env) =>
        env
          .fromElements(0, 1, 2, 3)
          .filter(((n: number) => n % 2) as never)
          .sinkTo(sink),
      ),
    ).toBe('FINISHED');
    expect(sink.values.sort()).toEqual([1, 3]);
  });

  it("a reader's own errors name the source, not the operator chained to it; pollNext returning something else than 'more', 'nothing' or 'end' fails (it spun forever)", async () => {
    const throwing = await outcome((env) =>
      env
        .fromSource(
          source(() => {
            throw new Error('reader broke');
          }),
          'MySource',
        )
        .map((n) => n)
        .name('Map')
        .sinkTo(new CollectSink<number>()),
    );
    expect(throwing).toMatch(/operator 'MySource' in task .*failed: reader broke/);
    const wrongStatus = await outcome((env) => env.fromSource(source(() => 'yes'), 'MySource').sinkTo(new CollectSink<number>()));
    expect(wrongStatus).toMatch(/operator 'MySource' .*pollNext returned 'yes'; it must return 'more' \(call again now\), 'nothing' \(after isAvailable\(\)\) or 'end'/);
  });

  it('an allowed lateness beyond any watermark (Infinity) keeps windows until the end of the input (it aborted the process: a cleanup timer that fired forever)', async () => {
    const sink = new CollectSink<number>();
    const status = await outcome((env) =>
      env
        .fromElements(1, 2, 11, 12, 25)
        .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((n) => n))
        .keyBy(() => 0)
        .window(TumblingEventTimeWindows.of(10))
        .allowedLateness(Infinity)
        .reduce((a, b) => a + b)
        .sinkTo(sink),
    );
    expect(status).toBe('FINISHED');
    expect(sink.values).toEqual([3, 23, 25]);
  });

  it('a subclass of Map in state is refused at the write (it came back from a snapshot as an empty object)', async () => {
    class Registry extends Map<string, number> {}
    const message = await outcome((env) =>
      env
        .fromElements(1)
        .keyBy(() => 'k')
        .process<number>({
          open(ctx) {
            (this as unknown as { s: ValueState<Map<string, number>> }).s = ctx.getState(valueState<Map<string, number>>('registry'));
          },
          processElement(n, _ctx, out) {
            (this as unknown as { s: ValueState<Map<string, number>> }).s.update(new Registry([['a', n]]));
            out.collect(n);
          },
        })
        .name('Registrar')
        .sinkTo(new CollectSink<number>()),
    );
    expect(message).toMatch(/operator 'Registrar' .*cannot write to state 'registry': value is an instance of class Registry \(a subclass\); state holds plain Arrays, Maps and Sets only/);
  });

  it('out.collect(undefined) fails naming the operator, and ctx.output with something else than an OutputTag fails (its records were dropped without a word)', async () => {
    const undefinedRecord = await outcome((env) =>
      env
        .fromElements(1, 2)
        .flatMap<number>((n, out) => out.collect((n > 1 ? undefined : n) as number))
        .name('Holey')
        .sinkTo(new CollectSink<number>()),
    );
    expect(undefinedRecord).toMatch(/operator 'Holey' .*out\.collect\(undefined\): a record cannot be undefined; collect a value \(null is one\), or do not call collect/);
    const stringTag = await outcome((env) =>
      env
        .fromElements(1, 2)
        .process<number>({
          processElement: (n, ctx, out) => {
            ctx.output('late' as unknown as OutputTag<number>, n);
            out.collect(n);
          },
        })
        .name('Tagger')
        .sinkTo(new CollectSink<number>()),
    );
    expect(stringTag).toMatch(/operator 'Tagger' .*ctx\.output\(tag, value\) takes an OutputTag, got the string 'late': create the tag once/);
    // A real tag nobody reads is dropped, as in Flink.
    const unread = new OutputTag<number>('unread');
    const sink = new CollectSink<number>();
    expect(
      await outcome((env) =>
        env
          .fromElements(1, 2)
          .process<number>({
            processElement: (n, ctx, out) => {
              ctx.output(unread, n);
              out.collect(n * 10);
            },
          })
          .sinkTo(sink),
      ),
    ).toBe('FINISHED');
    expect(sink.values.sort()).toEqual([10, 20]);
  });

  it('an async function that returns its result instead of completing the ResultFuture fails at once (it waited for the timeout); one that returns a timer is fine', async () => {
    for (const [what, fn] of [
      ['a value', (n: number) => [n * 2]],
      ['a promise of a value', async (n: number) => n * 2],
    ] as const) {
      const started = Date.now();
      const message = await outcome((env) =>
        AsyncDataStream.orderedWait<number, number>(env.fromElements(1, 2), fn as never, 60_000)
          .name('Lookup')
          .sinkTo(new CollectSink<number>()),
      );
      expect(message, what).toMatch(/operator 'Lookup' .*the asyncInvoke function returned .* instead of completing its ResultFuture.* resultFuture\.complete\(\[\.\.\.\]\)/);
      expect(Date.now() - started, what).toBeLessThan(30_000);
    }
    const sink = new CollectSink<number>();
    expect(
      await outcome((env) =>
        AsyncDataStream.unorderedWait<number, number>(env.fromElements(1, 2), ((n: number, rf: { complete(r: number[]): void }) => setTimeout(() => rf.complete([n * 2]), 5)) as never, 10_000).sinkTo(sink),
      ),
    ).toBe('FINISHED');
    expect(sink.values.sort()).toEqual([2, 4]);
  });

  it('one state name asked for with another default value is refused (the second default was silently ignored); the same descriptor asked for twice is fine', async () => {
    type Holder = { a: ValueState<number>; b: ValueState<number> };
    const message = await outcome((env) =>
      env
        .fromElements(1, 2)
        .keyBy(() => 'k')
        .process<number>({
          open(ctx) {
            const h = this as unknown as Holder;
            h.a = ctx.getState(valueState<number>('count', { defaultValue: 0 }));
            h.b = ctx.getState(valueState<number>('count', { defaultValue: 100 }));
          },
          processElement(n, _ctx, out) {
            out.collect(n);
          },
        })
        .name('Counter')
        .sinkTo(new CollectSink<number>()),
    );
    expect(message).toMatch(/operator 'Counter' .*state 'count' was registered with the default value 0 and is now requested with 100: one name is one state/);
    type Sums = { a: ValueState<{ sum: number }>; b: ValueState<{ sum: number }> };
    const sink = new CollectSink<number>();
    expect(
      await outcome((env) =>
        env
          .fromElements(1, 2, 3)
          .keyBy(() => 'k')
          .process<number>({
            open(ctx) {
              const h = this as unknown as Sums;
              h.a = ctx.getState(valueState<{ sum: number }>('sum', { defaultValue: { sum: 0 } }));
              h.b = ctx.getState(valueState<{ sum: number }>('sum', { defaultValue: { sum: 0 } }));
            },
            processElement(n, _ctx, out) {
              const h = this as unknown as Sums;
              const next = { sum: h.a.value()!.sum + n };
              h.b.update(next);
              out.collect(next.sum);
            },
          })
          .sinkTo(sink),
      ),
    ).toBe('FINISHED');
    expect(sink.values).toEqual([1, 3, 6]);
  });

  it('an object as a map state key is refused at the write (it compared by identity: never found again, nor after a restore)', async () => {
    const message = await outcome((env) =>
      env
        .fromElements(1, 1)
        .keyBy(() => 'k')
        .process<number>({
          open(ctx) {
            (this as unknown as { m: MapState<{ id: number }, number> }).m = ctx.getMapState(mapState<{ id: number }, number>('byId'));
          },
          processElement(n, _ctx, out) {
            const m = (this as unknown as { m: MapState<{ id: number }, number> }).m;
            m.put({ id: n }, (m.get({ id: n }) ?? 0) + 1);
            out.collect(n);
          },
        })
        .name('Indexer')
        .sinkTo(new CollectSink<number>()),
    );
    expect(message).toMatch(/operator 'Indexer' .*cannot write to state 'byId' \(map key\): the key \{"id":1\} is an object, and map keys must be strings, numbers, bigints or booleans/);
  });

  it('a reader that gives a record a timestamp that is not whole epoch milliseconds fails naming the source (the record was dropped by the windows without a word)', async () => {
    for (const [what, t] of [
      ['NaN', Number.NaN],
      ['a string', '2026-12-07T00:00:00Z'],
    ] as const) {
      const timed = source(() => 'end', t as number);
      for (const strategy of [undefined, WatermarkStrategy.forMonotonousTimestamps<number>()]) {
        const message = await outcome((env) =>
          (strategy === undefined ? env.fromSource(timed, 'Clock') : env.fromSource(timed, strategy, 'Clock'))
            .keyBy(() => 0)
            .window(TumblingEventTimeWindows.of(10))
            .reduce((a, b) => a + b)
            .sinkTo(new CollectSink<number>()),
        );
        expect(message, `${what}, strategy ${strategy !== undefined}`).toMatch(/source '.*Clock.*': the reader emitted a record with the timestamp .*; ReaderOutput\.collect\(record, timestampMs\) takes a whole number of epoch milliseconds/);
      }
    }
  });

  it('two keyed inputs whose keys differ in type (1 and "1") fail naming both (connect().keyBy, interval join and window join matched nothing, without a word)', async () => {
    type Order = { id: number; ts: number };
    type Payment = { orderId: string; ts: number };
    const orders: Order[] = [1, 2, 3].map((id) => ({ id, ts: id * 10 }));
    const payments: Payment[] = [1, 2, 3].map((id) => ({ orderId: String(id), ts: id * 10 + 1 }));
    const timed = <T extends { ts: number }>(env: StreamExecutionEnvironment, xs: T[]) =>
      env.fromElements(...xs).assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<T>().withTimestampAssigner((x) => x.ts));
    const expected = /keys are numbers \(e\.g\. 1\) and the second input's are strings \(e\.g\. '1'\); keys only meet when equal in type and value .*make both key selectors return the same type/;
    const connected = await outcome((env) =>
      env
        .fromElements(...orders)
        .connect(env.fromElements(...payments))
        .keyBy((o) => o.id, ((p: Payment) => p.orderId) as never)
        .process<string>({ processElement1: () => {}, processElement2: () => {} })
        .name('Matcher')
        .sinkTo(new CollectSink<string>()),
    );
    expect(connected).toMatch(/operator 'Matcher' .*connect\(\.\.\.\)\.keyBy\(key1, key2\): the first input's /);
    expect(connected).toMatch(expected);
    const interval = await outcome((env) =>
      timed(env, orders)
        .keyBy((o) => o.id)
        .intervalJoin(timed(env, payments).keyBy(((p: Payment) => p.orderId) as never))
        .between(-5, 5)
        .process<string>({ processElement: (o, p, _ctx, out) => out.collect(`${o.id}+${p.orderId}`) })
        .sinkTo(new CollectSink<string>()),
    );
    expect(interval).toMatch(/intervalJoin: the first input's /);
    expect(interval).toMatch(expected);
    const windowJoin = await outcome((env) =>
      timed(env, orders)
        .join(timed(env, payments))
        .where((o) => o.id)
        .equalTo(((p: Payment) => p.orderId) as never)
        .window(TumblingEventTimeWindows.of(100))
        .apply((o, p) => `${o.id}+${p.orderId}`)
        .sinkTo(new CollectSink<string>()),
    );
    expect(windowJoin).toMatch(/where\(\.\.\.\)\.equalTo\(\.\.\.\): the first input's /);
    expect(windowJoin).toMatch(expected);
    // Keys of one type on both sides join as before.
    const sink = new CollectSink<string>();
    expect(
      await outcome((env) =>
        timed(env, orders)
          .join(timed(env, payments))
          .where((o) => String(o.id))
          .equalTo((p) => p.orderId)
          .window(TumblingEventTimeWindows.of(100))
          .apply((o, p) => `${o.id}+${p.orderId}`)
          .sinkTo(sink),
      ),
    ).toBe('FINISHED');
    expect(sink.values.sort()).toEqual(['1+1', '2+2', '3+3']);
  });
});
