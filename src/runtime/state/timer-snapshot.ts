import type { TimerQueue } from '../task/timer-queue.js';
import type { ChangedEntries } from './changed-entries.js';
import { GroupCapture } from './heap-snapshot.js';
import type { KeyType } from './key-group.js';
import { TIMER_DELTA_BY_KEY } from './keyed-state-delta.js';
import { packGroup } from './keyed-state-snapshot.js';
import { wholeTimerDomainBytes, wholeTimerGroupBytes } from './whole-timer-groups.js';
import { assert } from '../../util/assert.js';

/** What a timer capture writes per key group. */
export type TimerCaptureKind =
  /** Every timer (a full snapshot). */
  | { readonly kind: 'full' }
  /** The timers of keys whose timers changed since the base checkpoint (`since` gives them per key group). */
  | { readonly kind: 'delta'; readonly since: (q: ChangedEntries<KeyType>) => (groupIndex: number) => ReadonlySet<KeyType> }
  /** Every timer, written into `arena` for the snapshot thread (whole-timer-groups.ts): no change tracking needed. */
  | { readonly kind: 'whole'; readonly arena: { alloc(n: number): Uint8Array } };

/**
 * Captures an operator's event-time and processing-time timers for a snapshot, copy on
 * access per key group (as heap state). The returned function finishes the capture: timer
 * bytes per key group, `[event, processing]` with each domain's packed group or null.
 *
 * A delta captures only the timers of keys whose timers changed since the base checkpoint,
 * per key group `[event, processing, TIMER_DELTA_BY_KEY]` with each domain's delta
 * (`TimerQueue.encodeGroupDelta`: the changed keys and their timers now) or null when none of
 * its keys changed. A whole capture gives every key group's timers in the format of
 * whole-timer-groups.ts.
 */
export function captureTimers(queues: readonly [TimerQueue, TimerQueue], startKeyGroup: number, mode: TimerCaptureKind): () => Promise<Map<number, Uint8Array>> {
  const captures = queues.map((q) => {
    q.capture?.completeNow(); // an older snapshot still capturing finishes first
    let encode: (groupIndex: number) => Uint8Array | undefined;
    if (mode.kind === 'full') encode = (i) => q.encodeGroup(i);
    else if (mode.kind === 'whole') encode = (i) => wholeTimerDomainBytes(q, i, mode.arena);
    else {
      assert(q.changes !== null, 'a delta snapshot captures timer queues whose changes are tracked');
      const changed = mode.since(q.changes);
      encode = (i) => q.encodeGroupDelta(i, changed(i));
    }
    const capture = new GroupCapture(q, startKeyGroup, encode);
    q.capture = capture;
    return capture;
  }) as [GroupCapture, GroupCapture];
  return async () => {
    for (const c of captures) await c.completeAsync();
    const [event, processing] = captures;
    const timers = new Map<number, Uint8Array>();
    for (const kg of new Set([...event.groups.keys(), ...processing.groups.keys()])) {
      const e = event.groups.get(kg) ?? null;
      const p = processing.groups.get(kg) ?? null;
      if (mode.kind === 'whole') {
        assert(e !== null && p !== null, `a whole timer capture writes both domains of key group ${kg}`);
        timers.set(kg, wholeTimerGroupBytes(e, p, mode.arena));
      } else timers.set(kg, packGroup(mode.kind === 'delta' ? [e, p, TIMER_DELTA_BY_KEY] : [e, p]));
    }
    return timers;
  };
}
