import type { KeySelector } from '../../api/functions.js';
import type { KeyType } from '../state/key-group.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import { InternalTimerService, type Triggerable } from '../task/internal-timer-service.js';
import { StreamOperator } from '../task/stream-operator.js';

/**
 * The function object one operator instance (one subtask) works with. Flink gives every
 * subtask its own deserialized copy of a user function, so what `open()` stores on `this`
 * (state handles, caches) belongs to that subtask. Here all subtasks run in one process
 * from the same object, so each gets an object that inherits from the user's: methods and
 * fields stay visible, and assignments to `this` stay per subtask. (Closures and JavaScript
 * `#private` fields cannot be separated this way.)
 */
export function perSubtask<F extends object>(fn: F): F {
  return Object.create(fn) as F;
}

/** Base of operators on keyed streams: keyed state backend, key selector and timers. */
export abstract class KeyedOperator<OUT> extends StreamOperator<OUT> implements Triggerable {
  protected backend!: KeyedStateBackend;
  protected keySelector!: KeySelector<unknown, KeyType>;
  protected timers!: InternalTimerService;

  override open(): void | Promise<void> {
    const rt = this.runtime;
    if (rt.keyedBackend === undefined || rt.keySelector1 === undefined) {
      throw new Error(`operator '${rt.name}' needs a keyed stream`);
    }
    this.backend = rt.keyedBackend;
    this.keySelector = rt.keySelector1;
    const backend = this.backend;
    const slices = rt.shouldYield !== undefined && rt.defer !== undefined ? { shouldYield: rt.shouldYield, defer: rt.defer } : undefined;
    this.timers = new InternalTimerService(rt.processingTime, this, (key) => backend.setCurrentKey(key), backend.timerQueue(0), backend.timerQueue(1), slices);
    return this.openKeyed();
  }

  protected openKeyed(): void | Promise<void> {}

  protected setKeyOf(value: unknown): void {
    this.setKeyWith(this.keySelector, value);
  }

  /** Sets the key `selector` gives `value`, in the key group the task was told of (if any). */
  protected setKeyWith(selector: KeySelector<unknown, KeyType>, value: unknown): void {
    const key = selector(value);
    const keyGroup = this.keyGroupHint;
    if (keyGroup < 0) {
      this.backend.setCurrentKey(key);
      return;
    }
    this.keyGroupHint = -1;
    this.backend.setCurrentKeyInGroup(key, keyGroup);
  }

  protected override onWatermark(watermarkMs: number): boolean {
    return this.timers.advanceWatermark(watermarkMs);
  }

  onEventTime(_timestampMs: number, _key: KeyType, _namespace: number): void {}
  onProcessingTime(_timestampMs: number, _key: KeyType, _namespace: number): void {}
}
