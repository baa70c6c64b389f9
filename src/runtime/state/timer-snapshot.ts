import type { TimerQueue } from '../task/timer-queue.js';
import type { ChangedEntries } from './changed-entries.js';
import { GroupCapture } from './heap-snapshot.js';
import { EMPTY_TIMER_GROUP } from './keyed-state-delta.js';
import { packGroup } from './keyed-state-snapshot.js';

/**
 * Captures an operator's event-time and processing-time timers for a snapshot, copy on
 * access per key group (as heap state). With `since` (a delta), only the key groups whose
 * timers changed since the base checkpoint are captured, whole (an emptied group as
 * EMPTY_TIMER_GROUP). The returned function finishes the capture: timer bytes per key group.
 */
export function captureTimers(
  queues: readonly [TimerQueue, TimerQueue],
  startKeyGroup: number,
  since: ((q: ChangedEntries<0>) => (groupIndex: number) => ReadonlySet<0>) | undefined,
): () => Promise<Map<number, Uint8Array>> {
  const NONE = new Uint8Array(0);
  const captures = queues.map((q) => {
    q.capture?.completeNow(); // an older snapshot still capturing finishes first
    const changed = since === undefined || q.changes === null ? undefined : since(q.changes);
    const capture = new GroupCapture(q, startKeyGroup, (i) => {
      if (changed === undefined) return q.encodeGroup(i);
      if (changed(i).size === 0) return undefined;
      return q.encodeGroup(i) ?? NONE;
    });
    q.capture = capture;
    return capture;
  }) as [GroupCapture, GroupCapture];
  return async () => {
    for (const c of captures) await c.completeAsync();
    const [event, processing] = captures;
    const timers = new Map<number, Uint8Array>();
    const orNull = (b: Uint8Array | undefined): Uint8Array | null => (b === undefined || b.length === 0 ? null : b);
    for (const kg of new Set([...event.groups.keys(), ...processing.groups.keys()])) {
      const e = orNull(event.groups.get(kg));
      const p = orNull(processing.groups.get(kg));
      timers.set(kg, e === null && p === null ? EMPTY_TIMER_GROUP : packGroup([e, p]));
    }
    return timers;
  };
}
