import { KeyTypeAgreement } from '../runtime/operators/key-type-agreement.js';
import type { KeyType } from '../runtime/state/key-group.js';
import { isPhysical } from '../graph/transformation.js';
import type { DataStream, SingleOutputStream } from './data-stream.js';
import type { Collector, KeySelector, OutputTypeNotInferred } from './functions.js';
import type { WindowAssigner } from './windows.js';

/**
 * Flink's CoGroupFunction: called once per window and key with the records of each input in
 * that window (one of the two lists may be empty), in the order the window received them.
 */
export type CoGroupFunction<in A, in B, out R> = (first: readonly A[], second: readonly B[], out: Collector<R>) => void;

/** A record of either input on its way to the shared window operator (Flink's TaggedUnion). */
type Tagged<A, B> = { readonly side: 1; readonly value: A } | { readonly side: 2; readonly value: B };

/** Tags the records of one input, at that input's parallelism so the tagging chains to it (as Flink's Input1Tagger). */
function tagged<T, A, B>(input: DataStream<T>, side: 1 | 2, name: string): DataStream<Tagged<A, B>> {
  const out = input.map((value) => ({ side, value }) as unknown as Tagged<A, B>, name);
  const t = input.transformation;
  if (isPhysical(t) && t.parallelism !== undefined) out.setParallelism(t.parallelism);
  return out;
}

/**
 * The keys and window of a join or coGroup: `where(keyA).equalTo(keyB).window(assigner)`. Both
 * inputs are tagged, united and keyed by their own key selector, and one window operator
 * collects both sides of each key and window (Flink's CoGroupedStreams, on which its joins are
 * built too).
 */
export class CoGroupWindow<A, B, K extends KeyType> {
  private allowedLatenessMs = 0;

  constructor(
    private readonly first: DataStream<A>,
    private readonly second: DataStream<B>,
    private readonly keyA: KeySelector<A, K>,
    private readonly keyB: KeySelector<B, K>,
    private readonly assigner: WindowAssigner,
  ) {}

  /** Keep windows this long after the watermark passed their end; late records fire them again. */
  allowedLateness(ms: number): this {
    if (!(ms >= 0)) throw new RangeError(`allowed lateness must be >= 0 ms, got ${ms}`);
    this.allowedLatenessMs = ms;
    return this;
  }

  /** The co-group: `fn(first, second, out)` per key and window. Results carry the window's last timestamp. */
  apply<R = OutputTypeNotInferred<'give it as apply<Out>(...), or annotate out: Collector<Out>'>>(fn: CoGroupFunction<A, B, R>, name = 'CoGroup'): SingleOutputStream<R> {
    const { keyA, keyB } = this;
    const united = tagged<A, A, B>(this.first, 1, `${name}: tag first input`).union(tagged<B, A, B>(this.second, 2, `${name}: tag second input`));
    const keyTypes = new KeyTypeAgreement(`${name}: where(...).equalTo(...)`);
    const windowed = united
      .keyBy((t): K => {
        const key = t.side === 1 ? keyA(t.value) : keyB(t.value);
        keyTypes.check((t.side - 1) as 0 | 1, key);
        return key;
      })
      .window(this.assigner);
    windowed.allowedLateness(this.allowedLatenessMs);
    return windowed
      .process<R>({
        process(_key, _ctx, elements, out) {
          const firsts: A[] = [];
          const seconds: B[] = [];
          for (const e of elements) {
            if (e.side === 1) firsts.push(e.value);
            else seconds.push(e.value);
          }
          fn(firsts, seconds, out);
        },
      })
      .name(name);
  }
}

/** `where(keyA).equalTo(keyB)`: give the window with `window(assigner)`. */
export class KeysEqualTo<W> {
  constructor(private readonly withWindow: (assigner: WindowAssigner) => W) {}

  window(assigner: WindowAssigner): W {
    return this.withWindow(assigner);
  }
}

/** `where(keyA)`: give the other input's key with `equalTo(keyB)`, of the same type. */
export class KeysWhere<B, K extends KeyType, W> {
  constructor(private readonly withKeyB: (keyB: KeySelector<B, K>) => KeysEqualTo<W>) {}

  equalTo(keyB: KeySelector<B, K>): KeysEqualTo<W> {
    if (typeof keyB !== 'function') throw new TypeError('equalTo needs a function that returns the key of a record of the second input');
    return this.withKeyB(keyB);
  }
}

/** `a.coGroup(b)` (Flink's CoGroupedStreams): `.where(keyA).equalTo(keyB).window(assigner).apply(fn)`. */
export class CoGroupedStreams<A, B> {
  constructor(
    readonly first: DataStream<A>,
    readonly second: DataStream<B>,
  ) {
    if (first.env !== second.env) throw new Error('coGroup: streams belong to different environments');
  }

  where<K extends KeyType>(keyA: KeySelector<A, K>): KeysWhere<B, K, CoGroupWindow<A, B, K>> {
    return this.whereThen(keyA, (w) => w);
  }

  /** `where(keyA)` whose `window(...)` gives `finish(window)`: how joins are built on coGroup. */
  whereThen<K extends KeyType, W>(keyA: KeySelector<A, K>, finish: (window: CoGroupWindow<A, B, K>) => W): KeysWhere<B, K, W> {
    if (typeof keyA !== 'function') throw new TypeError('where needs a function that returns the key of a record of the first input');
    return new KeysWhere<B, K, W>((keyB) => new KeysEqualTo((assigner) => finish(new CoGroupWindow(this.first, this.second, keyA, keyB, assigner))));
  }
}
