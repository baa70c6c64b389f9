import type { TimerQueue } from '../task/timer-queue.js';
import type { ChangedEntries } from './changed-entries.js';
import { GroupCapture } from './heap-snapshot.js';
import type { KeyType } from './key-group.js';
import { TIMER_DELTA_BY_KEY } from './keyed-state-delta.js';
import { packGroup } from './keyed-state-snapshot.js';
import { assert } from '../../util/assert.js';

/**
 * Captures an operator's event-time and processing-time timers for a snapshot, copy on
 * access per key group (as heap state). The returned function finishes the capture: timer
 * bytes per key group, `[event, processing]` with each domain's packed group or null.
 *
 * With `since` (a delta), only the timers of keys whose timers changed since the base
 * checkpoint are captured, per key group `[event, processing, TIMER_DELTA_BY_KEY]` with each
 * domain's delta (`TimerQueue.encodeGroupDelta`: the changed keys and their timers now) or
 * null when none of its keys changed.
 */
export function captureTimers(
  queues: readonly [TimerQueue, TimerQueue],
  startKeyGroup: number,
  since: ((q: ChangedEntries<KeyType>) => (groupIndex: number) => ReadonlySet<KeyType>) | undefined,
): () => Promise<Map<number, Uint8Array>> {
  const delta = since !== undefined;
  const captures = queues.map((q) => {
    q.capture?.completeNow(); // an older snapshot still capturing finishes first
    let encode: (groupIndex: number) => Uint8Array | undefined;
    if (!delta) encode = (i) => q.encodeGroup(i);
    else {
      assert(q.changes !== null, 'a delta snapshot captures timer queues whose changes are tracked');
      const changed = since(q.changes);
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
      timers.set(kg, packGroup(delta ? [e, p, TIMER_DELTA_BY_KEY] : [e, p]));
    }
    return timers;
  };
}
