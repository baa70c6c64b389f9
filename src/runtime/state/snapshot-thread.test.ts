import { afterEach, describe, expect, it } from 'vitest';
import { valueState, type ValueState } from '../../api/state-descriptors.js';
import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { decodeKeyedStateSnapshot, encodeKeyedStateSnapshot, type KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { packKeyGroups, packedKeyGroupsOf } from './packed-key-groups.js';
import { SnapshotThread } from './snapshot-thread.js';

const RANGE = { startKeyGroup: 0, endKeyGroup: 127 };
const KEYS = Array.from({ length: 200 }, (_, i) => `k${i}`);
const threads: SnapshotThread[] = [];

afterEach(async () => {
  for (const t of threads.splice(0)) await t.stop();
});

function backend(thread: SnapshotThread): { b: HeapKeyedStateBackend; count: ValueState<number> } {
  const b = new HeapKeyedStateBackend(RANGE, 128, Date.now, thread);
  return { b, count: b.getOrCreateState(valueState<number>('count'), false) as unknown as ValueState<number> };
}

function writeAll(h: { b: HeapKeyedStateBackend; count: ValueState<number> }, value: (i: number) => number | undefined): void {
  KEYS.forEach((k, i) => {
    h.b.setCurrentKey(k);
    const v = value(i);
    if (v === undefined) h.count.clear();
    else h.count.update(v);
  });
}

/** A backend on a snapshot thread of its own, every key written (i), and its first snapshot (which resets the replica) taken. */
async function startedBackend(): Promise<{ thread: SnapshotThread; h: ReturnType<typeof backend> }> {
  const thread = new SnapshotThread();
  threads.push(thread);
  const h = backend(thread);
  writeAll(h, (i) => i);
  await h.b.snapshot({ checkpointId: 1, incremental: false })();
  return { thread, h };
}

/** The counts a snapshot restores (through its encoded form, as storage holds it). */
function restoredCounts(s: KeyedStateSnapshot): (number | undefined)[] {
  expect(s.baseCheckpointId).toBeUndefined(); // the snapshot thread answers with full snapshots
  const r = new HeapKeyedStateBackend(RANGE, 128);
  r.restore([decodeKeyedStateSnapshot(encodeKeyedStateSnapshot(s))]);
  const count = r.getOrCreateState(valueState<number>('count'), false) as unknown as ValueState<number>;
  return KEYS.map((k) => {
    r.setCurrentKey(k);
    return count.value() ?? undefined;
  });
}

describe('snapshot thread', () => {
  it('full snapshots from the replica equal the state at each synchronous point, also when the asynchronous parts are awaited out of order', async () => {
    const thread = new SnapshotThread();
    threads.push(thread);
    const h = backend(thread);
    writeAll(h, (i) => i);
    const first = h.b.snapshot({ checkpointId: 1, incremental: false }); // resets the replica
    writeAll(h, (i) => (i % 3 === 0 ? undefined : i * 2));
    const second = h.b.snapshot({ checkpointId: 2, incremental: false }); // a delta, assembled by the thread
    writeAll(h, (i) => i * 3);
    const third = h.b.snapshot({ checkpointId: 3, incremental: false });
    const [s3, s2, s1] = [await third(), await second(), await first()];
    expect(restoredCounts(s1)).toEqual(KEYS.map((_, i) => i));
    expect(restoredCounts(s2)).toEqual(KEYS.map((_, i) => (i % 3 === 0 ? undefined : i * 2)));
    expect(restoredCounts(s3)).toEqual(KEYS.map((_, i) => i * 3));
    expect(thread.busyMs).toBeGreaterThan(0); // deltas went through the thread
    // The thread's answers come packed as keyed state files: exactly what packing them here gives.
    for (const s of [s2, s3]) {
      const packed = packedKeyGroupsOf(s);
      expect(packed).toBeDefined();
      const mine = packKeyGroups(s);
      expect(Buffer.compare(packed!.data, mine.data)).toBe(0);
      expect(packed!.offsets).toEqual(mine.offsets);
    }
  });

  it('a snapshot thread that dies fails the snapshots in flight with a clear error; the next snapshot resets the replica in a new thread', async () => {
    const { thread, h } = await startedBackend();
    writeAll(h, (i) => i + 1);
    const inFlight = h.b.snapshot({ checkpointId: 2, incremental: false });
    const generation = thread.generation;
    await thread.stop(); // the worker exits while the delta may be on its way
    expect(thread.generation).toBe(generation + 1);
    const outcome = await inFlight().then(
      (s) => ({ ok: true as const, s }),
      (e: Error) => ({ ok: false as const, e }),
    );
    if (outcome.ok) expect(restoredCounts(outcome.s)).toEqual(KEYS.map((_, i) => i + 1));
    else expect(outcome.e.message).toMatch(/the snapshot thread (exited|failed)|replica is not at position/);
    writeAll(h, (i) => i + 2);
    expect(restoredCounts(await h.b.snapshot({ checkpointId: 3, incremental: false })())).toEqual(KEYS.map((_, i) => i + 2));
    writeAll(h, (i) => (i % 2 === 0 ? i + 3 : undefined));
    expect(restoredCounts(await h.b.snapshot({ checkpointId: 4, incremental: false })())).toEqual(KEYS.map((_, i) => (i % 2 === 0 ? i + 3 : undefined)));
  });

  it('a snapshot whose capture failed leaves the replica to be reset; later snapshots are still exact', async () => {
    const { h } = await startedBackend();
    writeAll(h, (i) => i + 10);
    // A delta that fails in the asynchronous part: a declared serializer that throws while encoding.
    let failEncode = false;
    const flaky = h.b.getOrCreateState(
      valueState<number>('flaky', {
        serializer: {
          id: 'flaky',
          encode: (v: number) => {
            if (failEncode) throw new Error('encoding failed');
            return Buffer.from(String(v));
          },
          decode: (b: Uint8Array) => Number(Buffer.from(b).toString()),
          check: () => {},
        },
      }),
      false,
    ) as unknown as ValueState<number>;
    h.b.setCurrentKey('k0');
    flaky.update(1);
    failEncode = true;
    await expect(h.b.snapshot({ checkpointId: 2, incremental: false })()).rejects.toThrow(/encoding failed/);
    failEncode = false;
    writeAll(h, (i) => (i === 0 ? 5 : i + 20));
    expect(restoredCounts(await h.b.snapshot({ checkpointId: 3, incremental: false })())).toEqual(KEYS.map((_, i) => (i === 0 ? 5 : i + 20)));
  });
});
