import { ExactlyOnceFileSink } from '../../src/connectors/file/exactly-once-file-sink.js';
import { numberSource } from '../../src/connectors/generator/sources.js';
import {
  valueState,
  type StreamExecutionEnvironment,
  type Collector,
  type KeyedProcessContext,
  type KeyedProcessFunction,
  type KeyedRuntimeContext,
  type ValueState,
} from '../../src/index.js';

/**
 * The keyed function of the exactly-once tests: counts records per key and emits
 * "key:count" (every count of a key exactly once, so duplicates and losses show), or the
 * record itself (for at-least-once checks, where counts may be off after a replay).
 */
export class CountPerKey implements KeyedProcessFunction<number, number, string> {
  private count!: ValueState<number>;
  constructor(private readonly emitRecord = false) {}
  open(ctx: KeyedRuntimeContext<number>): void {
    this.count = ctx.getState(valueState<number>('count'));
  }
  processElement(n: number, ctx: KeyedProcessContext<number>, out: Collector<string>): void {
    const c = (this.count.value() ?? 0) + 1;
    this.count.update(c);
    out.collect(this.emitRecord ? String(n) : `${ctx.getCurrentKey()}:${c}`);
  }
}

/** Independent reference, sorted: records 0..n-1 keyed by `i % keys`; key k sees counts 1..c_k once each. */
export function countReference(n: number, keys: number): string[] {
  const perKey = new Map<number, number>();
  for (let i = 0; i < n; i++) perKey.set(i % keys, (perKey.get(i % keys) ?? 0) + 1);
  const out: string[] = [];
  for (const [k, c] of perKey) for (let i = 1; i <= c; i++) out.push(`${k}:${i}`);
  return out.sort();
}

/**
 * The counting job of the restore tests: the numbers [0, records) at `eventsPerSecond` ->
 * keyBy(n % keys) -> CountPerKey -> exactly-once files in `out`, with the uids numbers, count
 * and sink (so runs restore each other's state).
 */
export function countingPipeline(
  env: StreamExecutionEnvironment,
  o: { records: number; eventsPerSecond: number; keys: number; out: string; splitAssignment?: 'static' | 'on-request' },
): void {
  env
    .fromSource(numberSource({ count: o.records, eventsPerSecond: o.eventsPerSecond, ...(o.splitAssignment === undefined ? {} : { splitAssignment: o.splitAssignment }) }), 'numbers')
    .uid('numbers')
    .keyBy((n) => n % o.keys)
    .process(new CountPerKey())
    .uid('count')
    .sinkTo(new ExactlyOnceFileSink<string>(o.out))
    .uid('sink');
}
