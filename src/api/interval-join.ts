import { IntervalJoinOperator } from '../runtime/operators/interval-join-operator.js';
import type { KeyType } from '../runtime/state/key-group.js';
import type { SingleOutputStream } from './data-stream.js';
import type { KeySelector, ProcessJoinFunction, ProcessOutputNotInferred } from './functions.js';
import type { KeyedStream } from './keyed-stream.js';
import type { OutputTag } from './output-tag.js';

function wholeMs(name: string, v: number): number {
  if (!Number.isSafeInteger(v)) throw new RangeError(`interval join: the ${name} bound must be a whole number of milliseconds, got ${v}`);
  return v;
}

/** `keyedA.intervalJoin(keyedB)`: give the bounds with `between`. */
export class IntervalJoin<A, B, K extends KeyType> {
  constructor(
    readonly left: KeyedStream<A, K>,
    readonly right: KeyedStream<B, K>,
  ) {
    if (left.input.env !== right.input.env) throw new Error('intervalJoin: streams belong to different environments');
  }

  /**
   * Joins each left record with the right records of its key whose timestamps lie in
   * [left + lowerBoundMs, left + upperBoundMs] (both inclusive unless made exclusive); the
   * bounds may be negative.
   */
  between(lowerBoundMs: number, upperBoundMs: number): IntervalJoined<A, B, K> {
    wholeMs('lower', lowerBoundMs);
    wholeMs('upper', upperBoundMs);
    if (lowerBoundMs > upperBoundMs) {
      throw new RangeError(`interval join: the lower bound (${lowerBoundMs} ms) must not be above the upper bound (${upperBoundMs} ms)`);
    }
    return new IntervalJoined<A, B, K>(this.left, this.right, lowerBoundMs, upperBoundMs);
  }
}

/** An interval join with its bounds (Flink's IntervalJoined): make a bound exclusive, route late data, then `process`. */
export class IntervalJoined<A, B, K extends KeyType> {
  private lowerInclusive = true;
  private upperInclusive = true;
  private leftLateDataTag: OutputTag<A> | undefined;
  private rightLateDataTag: OutputTag<B> | undefined;

  constructor(
    private readonly left: KeyedStream<A, K>,
    private readonly right: KeyedStream<B, K>,
    private readonly lowerBoundMs: number,
    private readonly upperBoundMs: number,
  ) {}

  lowerBoundExclusive(): this {
    this.lowerInclusive = false;
    return this;
  }

  upperBoundExclusive(): this {
    this.upperInclusive = false;
    return this;
  }

  /** Left records behind the watermark go to this side output instead of being dropped. */
  sideOutputLeftLateData(tag: OutputTag<A>): this {
    this.leftLateDataTag = tag;
    return this;
  }

  /** Right records behind the watermark go to this side output instead of being dropped. */
  sideOutputRightLateData(tag: OutputTag<B>): this {
    this.rightLateDataTag = tag;
    return this;
  }

  process<R = ProcessOutputNotInferred>(fn: ProcessJoinFunction<A, B, R>, name = 'IntervalJoin'): SingleOutputStream<R> {
    const lowerBoundMs = this.lowerInclusive ? this.lowerBoundMs : this.lowerBoundMs + 1;
    const upperBoundMs = this.upperInclusive ? this.upperBoundMs : this.upperBoundMs - 1;
    if (lowerBoundMs > upperBoundMs) {
      throw new RangeError(`interval join: with exclusive bounds, (${this.lowerBoundMs}, ${this.upperBoundMs}) ms holds no timestamp; widen the interval`);
    }
    const options = {
      lowerBoundMs,
      upperBoundMs,
      leftLateDataTag: this.leftLateDataTag as OutputTag<unknown> | undefined,
      rightLateDataTag: this.rightLateDataTag as OutputTag<unknown> | undefined,
    };
    return this.left.input.env.twoInput<R>(
      name,
      this.left.partitionedTransformation(),
      this.right.partitionedTransformation(),
      () => new IntervalJoinOperator(fn, options),
      this.left.keySelector as KeySelector<unknown, KeyType>,
      this.right.keySelector as KeySelector<unknown, KeyType>,
    );
  }
}
