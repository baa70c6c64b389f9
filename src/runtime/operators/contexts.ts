import type {
  Collector,
  KeyedProcessContext,
  KeyedRuntimeContext,
  KeyedStateStore,
  KeyedTimerService,
  OnTimerContext,
  ProcessContext,
  RuntimeContext,
  TimeDomain,
  TimerService,
} from '../../api/functions.js';
import type { OutputTag } from '../../api/output-tag.js';
import type { KeyedStateDescriptor } from '../../api/state-descriptors.js';
import type { KeyType } from '../state/key-group.js';
import type { InternalTimerService } from '../task/internal-timer-service.js';
import type { OperatorRuntime } from '../task/operator-runtime.js';
import type { Output } from '../task/output.js';
import { NO_TIMESTAMP } from '../channel/stream-element.js';
import type { TimestampedCollector } from './timestamped-collector.js';

/** The runtime context user functions get in `open`. */
export function runtimeContext(rt: OperatorRuntime): RuntimeContext {
  return {
    taskName: rt.name,
    subtaskIndex: rt.subtaskIndex,
    parallelism: rt.parallelism,
    maxParallelism: rt.maxParallelism,
    attemptNumber: rt.attemptNumber,
    operatorState: rt.operatorState,
  };
}

export function keyedRuntimeContext<K extends KeyType>(rt: OperatorRuntime): KeyedRuntimeContext<K> {
  const backend = keyedBackendOf(rt);
  return { ...runtimeContext(rt), ...keyedStateStore((d) => backend.getOrCreateState(d, false)) };
}

function keyedBackendOf(rt: OperatorRuntime): NonNullable<OperatorRuntime['keyedBackend']> {
  const backend = rt.keyedBackend;
  if (backend === undefined) throw new Error(`operator '${rt.name}' is not on a keyed stream`);
  return backend;
}

/** A KeyedStateStore whose handles `get` gives. */
function keyedStateStore(get: (d: KeyedStateDescriptor) => unknown): KeyedStateStore {
  const g = get as (d: KeyedStateDescriptor) => never;
  return { getState: g, getListState: g, getMapState: g, getReducingState: g, getAggregatingState: g };
}

/** Why a session window has no per-window state (as in Flink). */
export const SESSION_WINDOW_STATE = 'windowState(): per-window state is not allowed on session windows, which merge (as in Flink); use globalState(), or state in a KeyedProcessFunction';

/** Per-window state is kept apart from the function's keyed state of the same name. */
const WINDOW_STATE_PREFIX = '_window-state:';

/**
 * A ProcessWindowFunction's `windowState()`: each descriptor's state under its own name, in
 * the namespace `namespace()` gives when the handle is asked for (the window's).
 */
export function windowStateStore(rt: OperatorRuntime, namespace: () => number): KeyedStateStore {
  const backend = keyedBackendOf(rt);
  return keyedStateStore((d) => {
    const s = backend.getOrCreateState({ ...d, name: WINDOW_STATE_PREFIX + d.name }, true);
    s.setCurrentNamespace(namespace());
    return s;
  });
}

/** A ProcessWindowFunction's `globalState()`: the key's state across windows. */
export function globalStateStore(rt: OperatorRuntime): KeyedStateStore {
  const backend = keyedBackendOf(rt);
  return keyedStateStore((d) => backend.getOrCreateState(d, false));
}

/**
 * One mutable context per operator, refreshed for each record (no allocation per record).
 * Serves ProcessContext, KeyedProcessContext and OnTimerContext.
 */
export class RecordContext<K extends KeyType> implements OnTimerContext<K>, KeyedTimerService {
  timestampMs = NO_TIMESTAMP;
  domain: TimeDomain = 'EVENT_TIME';

  constructor(
    private readonly rt: OperatorRuntime,
    private readonly out: Output<unknown>,
    private readonly timers: InternalTimerService | undefined,
    private readonly watermark: () => number,
  ) {}

  timestamp(): number | undefined {
    return this.timestampMs === NO_TIMESTAMP ? undefined : this.timestampMs;
  }

  output<X>(tag: OutputTag<X>, value: X): void {
    this.out.collectSide(tag as OutputTag<unknown>, value, this.timestampMs);
  }

  timerService(): KeyedTimerService {
    return this;
  }

  getCurrentKey(): K {
    return this.backend().getCurrentKey() as K;
  }

  timeDomain(): TimeDomain {
    return this.domain;
  }

  currentProcessingTime(): number {
    return this.rt.processingTime.nowMs();
  }

  currentWatermark(): number {
    return this.watermark();
  }

  registerEventTimeTimer(timestampMs: number): void {
    this.keyedTimers().registerEventTimeTimer(timestampMs, this.getCurrentKey(), 0);
  }

  registerProcessingTimeTimer(timestampMs: number): void {
    this.keyedTimers().registerProcessingTimeTimer(timestampMs, this.getCurrentKey(), 0);
  }

  deleteEventTimeTimer(timestampMs: number): void {
    this.keyedTimers().deleteEventTimeTimer(timestampMs, this.getCurrentKey(), 0);
  }

  deleteProcessingTimeTimer(timestampMs: number): void {
    this.keyedTimers().deleteProcessingTimeTimer(timestampMs, this.getCurrentKey(), 0);
  }

  private backend(): NonNullable<OperatorRuntime['keyedBackend']> {
    const b = this.rt.keyedBackend;
    if (b === undefined) throw new Error(`operator '${this.rt.name}' is not on a keyed stream: no current key`);
    return b;
  }

  private keyedTimers(): InternalTimerService {
    if (this.timers === undefined) {
      throw new Error(`operator '${this.rt.name}': timers need a keyed stream (use keyBy(...).process(...))`);
    }
    return this.timers;
  }
}

export type { ProcessContext, KeyedProcessContext, TimerService };

/**
 * Calls a keyed function's onTimer. As Flink: output of an event-time timer carries the
 * timer's time; output of a processing-time timer has no event timestamp.
 */
export function fireKeyedTimer<K extends KeyType, OUT>(
  onTimer: ((timestampMs: number, ctx: OnTimerContext<K>, out: Collector<OUT>) => void) | undefined,
  ctx: RecordContext<K>,
  collector: TimestampedCollector<OUT>,
  timestampMs: number,
  domain: TimeDomain,
): void {
  if (onTimer === undefined) return;
  ctx.timestampMs = timestampMs;
  ctx.domain = domain;
  collector.timestampMs = domain === 'EVENT_TIME' ? timestampMs : NO_TIMESTAMP;
  onTimer(timestampMs, ctx, collector);
  ctx.domain = 'EVENT_TIME';
}
