import type { ProcessJoinContext, ProcessJoinFunction } from '../../api/functions.js';
import type { OutputTag } from '../../api/output-tag.js';
import { mapState, type MapState } from '../../api/state-descriptors.js';
import { MIN_WATERMARK, NO_TIMESTAMP } from '../channel/stream-element.js';
import type { KeyType } from '../state/key-group.js';
import { assert } from '../../util/assert.js';
import { keyedRuntimeContext } from './contexts.js';
import { KeyedOperator, perSubtask } from './keyed-operator.js';
import { KeyTypeAgreement } from './key-type-agreement.js';
import { TimestampedCollector } from './timestamped-collector.js';

/** Bounds of an interval join, both inclusive (exclusive ones are narrowed by 1 ms before). */
export interface IntervalJoinOptions {
  readonly lowerBoundMs: number;
  readonly upperBoundMs: number;
  readonly leftLateDataTag?: OutputTag<unknown> | undefined;
  readonly rightLateDataTag?: OutputTag<unknown> | undefined;
}

/** Keyed state: each side's records that may still join, by event timestamp. */
export const LEFT_BUFFER = '_interval-join-left';
export const RIGHT_BUFFER = '_interval-join-right';
/** Timer namespaces of the cleanup timers, one per side (as Flink's CLEANUP_NAMESPACE_LEFT/RIGHT). */
const CLEANUP_LEFT = 0;
const CLEANUP_RIGHT = 1;

/** A side's records that may still join, by event timestamp. */
type Buckets = MapState<number, unknown[]>;

/**
 * Flink's IntervalJoinOperator: joins the records of two keyed streams with equal keys whose
 * timestamps satisfy `left + lower <= right <= left + upper`, in event time. Each side's
 * records wait in keyed state, bucketed by timestamp, until the watermark passes the last
 * time a record of the other side could still join them; then a cleanup timer drops them.
 * A record behind the watermark is late: dropped, or sent to the side's late-data output.
 * Results carry the larger of the two timestamps.
 */
export class IntervalJoinOperator<K extends KeyType, IN1, IN2, OUT> extends KeyedOperator<OUT> {
  private readonly keyTypes = new KeyTypeAgreement('intervalJoin');
  private left!: Buckets;
  private right!: Buckets;
  private collector!: TimestampedCollector<OUT>;
  private leftTimestampMs = NO_TIMESTAMP;
  private rightTimestampMs = NO_TIMESTAMP;
  private readonly fn: ProcessJoinFunction<IN1, IN2, OUT>;
  private readonly ctx: ProcessJoinContext;

  constructor(
    fn: ProcessJoinFunction<IN1, IN2, OUT>,
    private readonly o: IntervalJoinOptions,
  ) {
    super();
    assert(o.lowerBoundMs <= o.upperBoundMs, 'interval join: lower bound above upper bound');
    this.fn = perSubtask(fn);
    this.userFunction = this.fn;
    const op = this;
    this.ctx = {
      getLeftTimestamp: () => op.leftTimestampMs,
      getRightTimestamp: () => op.rightTimestampMs,
      getTimestamp: () => op.collector.timestampMs,
      output<X>(tag: OutputTag<X>, value: X): void {
        op.output.collectSide(tag as OutputTag<unknown>, value, op.collector.timestampMs);
      },
    };
  }

  protected override openKeyed(): void | Promise<void> {
    this.left = this.backend.getOrCreateState(mapState<number, unknown[]>(LEFT_BUFFER), false) as Buckets;
    this.right = this.backend.getOrCreateState(mapState<number, unknown[]>(RIGHT_BUFFER), false) as Buckets;
    this.collector = new TimestampedCollector(this.output);
    return this.fn.open?.(keyedRuntimeContext<K>(this.runtime) as never);
  }

  processElement(value: unknown, timestampMs: number): void {
    this.setKeyOf(value);
    this.keyTypes.check(0, this.backend.getCurrentKey());
    this.join(value, timestampMs, true);
  }

  override processElement2(value: unknown, timestampMs: number): void {
    const selector = this.runtime.keySelector2;
    if (selector === undefined) throw new Error(`operator '${this.runtime.name}': the second input is not keyed`);
    this.setKeyWith(selector, value);
    this.keyTypes.check(1, this.backend.getCurrentKey());
    this.join(value, timestampMs, false);
  }

  private join(value: unknown, timestampMs: number, isLeft: boolean): void {
    const side = isLeft ? 'left' : 'right';
    if (timestampMs === NO_TIMESTAMP) {
      throw new Error(
        `interval join '${this.runtime.name}': a record of the ${side} input has no event timestamp. ` +
          'An interval join works in event time: call assignTimestampsAndWatermarks(...) on both inputs before keyBy.',
      );
    }
    if (this.currentWatermark !== MIN_WATERMARK && timestampMs < this.currentWatermark) {
      const tag = isLeft ? this.o.leftLateDataTag : this.o.rightLateDataTag;
      if (tag !== undefined) this.output.collectSide(tag, value, timestampMs);
      return;
    }
    const ours = isLeft ? this.left : this.right;
    const others = isLeft ? this.right : this.left;
    // The other side's timestamps that join with this record, relative to it.
    const lowerMs = isLeft ? this.o.lowerBoundMs : -this.o.upperBoundMs;
    const upperMs = isLeft ? this.o.upperBoundMs : -this.o.lowerBoundMs;

    // A new array: a snapshot under way may still hold the old one.
    const bucket = ours.get(timestampMs);
    ours.put(timestampMs, bucket === undefined ? [value] : [...bucket, value]);
    const from = timestampMs + lowerMs;
    const to = timestampMs + upperMs;
    for (const [otherMs, records] of others.entries()) {
      if (otherMs < from || otherMs > to) continue;
      for (const other of records) {
        if (isLeft) this.emit(value as IN1, other as IN2, timestampMs, otherMs);
        else this.emit(other as IN1, value as IN2, otherMs, timestampMs);
      }
    }
    // Past this time no record of the other side that is not late can join this one.
    const cleanupMs = upperMs > 0 ? timestampMs + upperMs : timestampMs;
    this.timers.registerEventTimeTimer(cleanupMs, this.backend.getCurrentKey(), isLeft ? CLEANUP_LEFT : CLEANUP_RIGHT);
  }

  private emit(left: IN1, right: IN2, leftMs: number, rightMs: number): void {
    this.leftTimestampMs = leftMs;
    this.rightTimestampMs = rightMs;
    this.collector.timestampMs = Math.max(leftMs, rightMs);
    this.fn.processElement(left, right, this.ctx, this.collector);
  }

  override onEventTime(timestampMs: number, _key: KeyType, namespace: number): void {
    // The bucket whose cleanup time this is (the inverse of the cleanupMs computed in join).
    if (namespace === CLEANUP_LEFT) {
      const upperMs = this.o.upperBoundMs;
      this.left.remove(upperMs > 0 ? timestampMs - upperMs : timestampMs);
    } else {
      assert(namespace === CLEANUP_RIGHT, `interval join: unknown timer namespace ${namespace}`);
      const lowerMs = this.o.lowerBoundMs;
      this.right.remove(lowerMs < 0 ? timestampMs + lowerMs : timestampMs);
    }
  }
}
