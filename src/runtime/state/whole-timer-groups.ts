import type { TimerQueue } from '../task/timer-queue.js';
import { COLUMNS_GROUP_MARKER, isColumnsGroup, wholeGroupBytes } from './delta-group-writer.js';
import { packGroup } from './keyed-state-snapshot.js';
import { assert } from '../../util/assert.js';

/**
 * A key group's timers sent whole to the snapshot thread, instead of a delta of the keys whose
 * timers changed. In a sliding window job nearly every key's timer changes between two
 * checkpoints (a window fires, the next is registered), so tracking those keys cost a Set
 * insertion per timer registered or fired and the delta a lookup per timer; writing every
 * timer of the group is a walk over arrays of doubles (numeric-timer-bucket.ts).
 *
 * Like the state tables' columns groups (delta-group-writer.ts), these bytes start with the
 * byte msgpack never uses (0xc1) and only the snapshot thread's replica reads them:
 * - flag 3: one time domain's timers as columns: 8-byte header (count as uint32 at offset 4),
 *   then `count` (timestamp, namespace) pairs and `count` keys as float64 (every key a number);
 * - flag 2 (`wholeGroupBytes`): one domain's packed group (`TimerQueue.encodeGroup`), for a
 *   group with keys that are not numbers;
 * - flag 4: a key group's two domains: 16-byte header (the event-time part's length as uint32
 *   at offset 4, the processing-time part's at offset 8), the event-time part at 16, the
 *   processing-time part at the next 8-byte boundary.
 */
const TIMER_COLUMNS_FLAG = 3;
const TIMER_PAIR_FLAG = 4;

interface Alloc {
  alloc(n: number): Uint8Array;
}

/** The timers of one domain's key group `groupIndex`, whole (an empty group too: it tells the replica the group is empty now). */
export function wholeTimerDomainBytes(queue: TimerQueue, groupIndex: number, arena: Alloc): Uint8Array {
  const count = queue.numericGroupSize(groupIndex);
  if (count < 0) return wholeGroupBytes(queue.encodeGroup(groupIndex), arena);
  const bytes = arena.alloc(8 * (1 + 3 * count));
  assert(bytes.byteOffset % 8 === 0, 'timer columns start at an 8-byte aligned offset');
  bytes.fill(0, 0, 8);
  bytes[0] = COLUMNS_GROUP_MARKER;
  bytes[1] = TIMER_COLUMNS_FLAG;
  new DataView(bytes.buffer, bytes.byteOffset, 8).setUint32(4, count, true);
  queue.writeNumericGroup(groupIndex, new Float64Array(bytes.buffer, bytes.byteOffset + 8, 3 * count), 0);
  return bytes;
}

/** A key group's event-time and processing-time parts (from `wholeTimerDomainBytes`) in one piece. */
export function wholeTimerGroupBytes(event: Uint8Array, processing: Uint8Array, arena: Alloc): Uint8Array {
  const processingAt = 16 + ((event.length + 7) & ~7);
  const bytes = arena.alloc(processingAt + processing.length);
  bytes.fill(0, 0, 16);
  bytes[0] = COLUMNS_GROUP_MARKER;
  bytes[1] = TIMER_PAIR_FLAG;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
  view.setUint32(4, event.length, true);
  view.setUint32(8, processing.length, true);
  bytes.set(event, 16);
  bytes.set(processing, processingAt);
  return bytes;
}

/** Whether a delta's timer group is a whole group (else a per-key delta). */
export function isWholeTimerGroup(bytes: Uint8Array): boolean {
  return isColumnsGroup(bytes) && bytes[1] === TIMER_PAIR_FLAG;
}

/** The full snapshot's timer group (`[event, processing]` packed) of a whole group; undefined when it holds no timer. */
export function fullTimerGroupOfWhole(bytes: Uint8Array): Uint8Array | undefined {
  assert(isWholeTimerGroup(bytes) && bytes.length >= 16, 'a whole timer group has a 16-byte header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
  const eventLength = view.getUint32(4, true);
  const processingAt = 16 + ((eventLength + 7) & ~7);
  const processingLength = view.getUint32(8, true);
  assert(processingAt + processingLength === bytes.length, `a whole timer group's parts fill it (${processingAt} + ${processingLength} of ${bytes.length} bytes)`);
  const event = domainOfWhole(bytes.subarray(16, 16 + eventLength));
  const processing = domainOfWhole(bytes.subarray(processingAt, processingAt + processingLength));
  return event === null && processing === null ? undefined : packGroup([event, processing]);
}

/** One domain's packed group (`TimerQueue.encodeGroup`'s bytes), or null when it has no timer; copies (the buffer goes back). */
function domainOfWhole(bytes: Uint8Array): Uint8Array | null {
  assert(isColumnsGroup(bytes), 'a timer domain sent whole starts with the columns marker');
  if (bytes[1] === 2) return bytes.length > 8 ? Uint8Array.prototype.slice.call(bytes, 8) : null;
  assert(bytes[1] === TIMER_COLUMNS_FLAG, `a timer domain sent whole is columns or a packed group (flag ${bytes[1]})`);
  const count = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(4, true);
  assert(bytes.length === 8 * (1 + 3 * count), `timer columns of ${count} timers take ${8 * (1 + 3 * count)} bytes (got ${bytes.length})`);
  if (count === 0) return null;
  // Copies: the bytes may sit at any offset of a buffer that goes back to the task thread.
  const columns = new Float64Array(new Uint8Array(bytes.subarray(8)).buffer);
  return packGroup([columns.subarray(0, 2 * count), columns.subarray(2 * count)]);
}
