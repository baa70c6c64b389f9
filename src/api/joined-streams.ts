import type { KeyType } from '../runtime/state/key-group.js';
import { CoGroupedStreams, type CoGroupWindow, type KeysWhere } from './co-grouped-streams.js';
import type { DataStream, SingleOutputStream } from './data-stream.js';
import type { Collector, KeySelector, OutputTypeNotInferred } from './functions.js';

/** Flink's JoinFunction: the result of one pair of records with equal keys in the same window. */
export type JoinFunction<in A, in B, out R> = (first: A, second: B) => R;
/** Flink's FlatJoinFunction: any number of results for one pair. */
export type FlatJoinFunction<in A, in B, out R> = (first: A, second: B, out: Collector<R>) => void;

/** A window join with its keys and window: finish with `apply` (one result per pair) or `flatApply`. */
export class JoinWindow<A, B, K extends KeyType> {
  constructor(private readonly coGroup: CoGroupWindow<A, B, K>) {}

  /** Keep windows this long after the watermark passed their end; late records fire them again. */
  allowedLateness(ms: number): this {
    this.coGroup.allowedLateness(ms);
    return this;
  }

  /** An inner join: `fn(first, second)` for every pair of the key's records of both inputs in a window. */
  apply<R>(fn: JoinFunction<A, B, R>, name = 'Join'): SingleOutputStream<R> {
    return this.flatApply<R>((a, b, out) => out.collect(fn(a, b)), name);
  }

  /** An inner join whose function emits any number of results per pair. */
  flatApply<R = OutputTypeNotInferred<'give it as flatApply<Out>(...), or annotate out: Collector<Out>'>>(fn: FlatJoinFunction<A, B, R>, name = 'Join'): SingleOutputStream<R> {
    return this.coGroup.apply<R>((firsts, seconds, out) => {
      for (const a of firsts) for (const b of seconds) fn(a, b, out);
    }, name);
  }
}

/**
 * `a.join(b)` (Flink's JoinedStreams): `.where(keyA).equalTo(keyB).window(assigner).apply(fn)`
 * joins the records of both inputs with equal keys that fall into the same window. Built on
 * coGroup, as in Flink: a window's records wait in keyed state until it fires.
 */
export class JoinedStreams<A, B> {
  private readonly coGroup: CoGroupedStreams<A, B>;

  constructor(first: DataStream<A>, second: DataStream<B>) {
    this.coGroup = new CoGroupedStreams(first, second);
  }

  where<K extends KeyType>(keyA: KeySelector<A, K>): KeysWhere<B, K, JoinWindow<A, B, K>> {
    return this.coGroup.whereThen(keyA, (w) => new JoinWindow(w));
  }
}
