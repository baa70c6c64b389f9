import { afterEach, describe, expect, it } from 'vitest';
import { valueState, type ValueState } from '../../api/state-descriptors.js';
import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { decodeKeyedStateSnapshot, encodeKeyedStateSnapshot, type KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { packKeyGroups, packedKeyGroupsOf } from './packed-key-groups.js';
import { SnapshotThread } from './snapshot-thread.js';
import { HeldKeyedStateSnapshot } from './held-keyed-state-snapshot.js';
import { decode } from '../storage/checksummed-file.js';
import { seededRandom } from '../../testing/seeded-random.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

  for (const turnsIntoMaps of [false, true]) {
    it(`numeric tables go to the thread as whole key groups (columns); its full snapshots equal the state at each position${turnsIntoMaps ? ', also after a table turned into maps' : ''}`, async () => {
      const seed = turnsIntoMaps ? 99 : 98;
      const random = seededRandom(seed);
      const thread = new SnapshotThread();
      threads.push(thread);
      type Slices = ValueState<number | string> & { setCurrentNamespace(n: number): void };
      const make = (t?: SnapshotThread, restoreFrom?: KeyedStateSnapshot) => {
        const b = new HeapKeyedStateBackend(RANGE, 128, Date.now, t);
        if (restoreFrom !== undefined) b.restore([decodeKeyedStateSnapshot(encodeKeyedStateSnapshot(restoreFrom))]);
        return { b, count: b.getOrCreateState(valueState<number>('count'), false) as unknown as ValueState<number>, slices: b.getOrCreateState(valueState<number | string>('slices'), true) as unknown as Slices };
      };
      const threaded = make(thread);
      // The model: what a restore of each snapshot must read back (-0 is written as 0, as msgpack does).
      const counts = new Map<number, number>();
      const slices = new Map<string, number | string>();
      // Numeric keys (auction ids), namespaces beyond 32 bits (slice timestamps), values of every sort of number.
      const keys = Array.from({ length: 300 }, (_, i) => i * 7919);
      const namespaces = Array.from({ length: 6 }, (_, i) => 1.7e12 + 2000 * i);
      const values = [0, -0, 1, 255, 65536, 2 ** 40, -3, 1.5, NaN, Infinity];
      for (let position = 1; position <= 10; position++) {
        for (let op = 0; op < 600; op++) {
          const k = keys[Math.floor(random() * keys.length)]!;
          const ns = namespaces[Math.floor(random() * namespaces.length)]!;
          const v = values[Math.floor(random() * values.length)]!;
          const convert = turnsIntoMaps && position === 6 && op === 300;
          const r = convert ? 0.5 : random();
          threaded.b.setCurrentKey(k);
          threaded.slices.setCurrentNamespace(ns);
          if (r < 0.3) {
            threaded.count.update(v);
            counts.set(k, v + 0);
          } else if (r < 0.4) {
            threaded.count.clear();
            counts.delete(k);
          } else if (r < 0.8) {
            const value = convert ? 'not a number' : v;
            threaded.slices.update(value);
            slices.set(`${k}|${ns}`, typeof value === 'number' ? value + 0 : value);
          } else {
            threaded.slices.clear();
            slices.delete(`${k}|${ns}`);
          }
        }
        const full = await threaded.b.snapshot({ checkpointId: position, incremental: false })();
        expect(full.baseCheckpointId).toBeUndefined();
        const restored = make(undefined, full);
        const readCounts = new Map<number, number>();
        const readSlices = new Map<string, number | string>();
        for (const k of keys) {
          restored.b.setCurrentKey(k);
          const c = restored.count.value();
          if (c !== null && c !== undefined) readCounts.set(k, c);
          for (const ns of namespaces) {
            restored.slices.setCurrentNamespace(ns);
            const v = restored.slices.value();
            if (v !== null && v !== undefined) readSlices.set(`${k}|${ns}`, v);
          }
        }
        expect(readCounts, `seed ${seed}, position ${position}`).toEqual(counts);
        expect(readSlices, `seed ${seed}, position ${position}`).toEqual(slices);
      }
      // The deltas' buffers came back and were written again (stale bytes in them must not leak into snapshots).
      expect(thread.pool.freeBytes).toBeGreaterThan(0);
      expect(thread.busyMs).toBeGreaterThan(0);
    });
  }

  for (const mixedKeys of [false, true]) {
    it(`timers go to the thread as whole key groups; its full snapshots hold exactly the timers of each synchronous point${mixedKeys ? ' (number and string keys)' : ''}`, async () => {
      const seed = mixedKeys ? 71 : 70;
      const random = seededRandom(seed);
      const thread = new SnapshotThread();
      threads.push(thread);
      const b = new HeapKeyedStateBackend(RANGE, 128, Date.now, thread);
      const queues = [b.timerQueue(0), b.timerQueue(1)] as const;
      // The model: "domain|timestamp|key|namespace" of every live timer.
      const id = (d: number, t: number, k: unknown, ns: number): string => `${d}|${t}|${typeof k}:${String(k)}|${ns}`;
      const model = new Set<string>();
      const keys: (number | string)[] = Array.from({ length: 200 }, (_, i) => (i % 7 === 0 ? 2 ** 40 + i : i % 11 === 0 ? i + 0.5 : i * 31));
      if (mixedKeys) for (let i = 0; i < 20; i++) keys.push(`key-${i}`);
      let now = 1.7e12;
      const readBack = (s: KeyedStateSnapshot): Set<string> => {
        const r = new HeapKeyedStateBackend(RANGE, 128);
        r.restore([decodeKeyedStateSnapshot(encodeKeyedStateSnapshot(s))]);
        return new Set(([0, 1] as const).flatMap((d) => [...r.timerQueue(d).entries()].map(([t, k, ns]) => id(d, t, k, ns))));
      };
      const step = (): void => {
        const d = random() < 0.7 ? 0 : 1;
        const k = keys[Math.floor(random() * keys.length)]!;
        const t = now + 2000 * Math.floor(random() * 5);
        const ns = t - 9999 + Math.floor(random() * 2);
        const r = random();
        if (r < 0.7) {
          queues[d].add(t, k, ns);
          model.add(id(d, t, k, ns));
        } else if (r < 0.85) {
          queues[d].delete(t, k, ns);
          model.delete(id(d, t, k, ns));
        } else if (r < 0.87) {
          now += 2000; // a window fires: every timer of both domains up to now
          for (const dd of [0, 1] as const) queues[dd].fireUpTo(now, (ft, fk, fns) => expect(model.delete(id(dd, ft, fk, fns)), `seed ${seed}: fired a live timer`).toBe(true));
        }
      };
      for (let position = 1; position <= 10; position++) {
        for (let op = 0; op < 800; op++) step();
        const atSync = new Set(model);
        const finish = b.snapshot({ checkpointId: position, incremental: false });
        // Timers change while the asynchronous part runs: the snapshot keeps those of the synchronous point.
        for (let op = 0; op < 200; op++) step();
        const full = await finish();
        expect(full.baseCheckpointId).toBeUndefined();
        expect(readBack(full), `seed ${seed}, position ${position}`).toEqual(atSync);
      }
      expect(thread.busyMs).toBeGreaterThan(0); // deltas went through the thread
    });
  }

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

  describe('held full snapshots (hold: the caller writes them to storage in this process)', () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });
    const tempDir = (): string => {
      const d = mkdtempSync(join(tmpdir(), 'sluice-held-'));
      dirs.push(d);
      return d;
    };

    it('stay in the snapshot thread, which writes the checksummed keyed state file itself: the same bytes as packing the snapshot here', async () => {
      const { h } = await startedBackend();
      writeAll(h, (i) => (i % 4 === 0 ? undefined : i + 7));
      const held = await h.b.snapshot({ checkpointId: 2, incremental: false, hold: true })();
      expect(held).toBeInstanceOf(HeldKeyedStateSnapshot);
      // The reference: the same state snapshotted without the thread.
      writeAll(h, (i) => (i % 4 === 0 ? undefined : i + 7));
      const reference = await h.b.snapshot({ checkpointId: 3, incremental: false })();
      const expected = packKeyGroups(reference);
      const h2 = held as HeldKeyedStateSnapshot;
      expect(h2.sizeBytes).toBe(expected.data.length);
      expect([...h2.keyGroupOffsets]).toEqual(expected.offsets);
      const path = join(tempDir(), 'state');
      const checksum = await h2.writeFile(path, '0123456789abcdef');
      const file = decode(readFileSync(path), { file: path, checkpointId: 2, expectedKind: 'state' });
      expect(file.checksum).toBe(checksum);
      expect(Buffer.compare(file.payload, expected.data)).toBe(0);
      expect(restoredCounts(reference)).toEqual(KEYS.map((_, i) => (i % 4 === 0 ? undefined : i + 7)));
      // Used up: the thread no longer holds it.
      await expect(h2.take()).rejects.toThrow(/written or taken already/);
    });

    it('can be brought to this thread instead (state sent elsewhere, inline state) as the full snapshot', async () => {
      const { h } = await startedBackend();
      writeAll(h, (i) => i * 5);
      const held = (await h.b.snapshot({ checkpointId: 2, incremental: false, hold: true })()) as HeldKeyedStateSnapshot;
      const s = await held.take();
      expect(restoredCounts(s)).toEqual(KEYS.map((_, i) => i * 5));
      expect(packedKeyGroupsOf(s)?.data.length).toBe(held.sizeBytes);
    });

    it('at most four are held per backend: writing an older one fails with a message that says so', async () => {
      const { h } = await startedBackend();
      const held: HeldKeyedStateSnapshot[] = [];
      for (let c = 2; c <= 7; c++) {
        writeAll(h, (i) => i + c);
        held.push((await h.b.snapshot({ checkpointId: c, incremental: false, hold: true })()) as HeldKeyedStateSnapshot);
      }
      await expect(held[0]!.writeFile(join(tempDir(), 'a'), '0123456789abcdef')).rejects.toThrow(/not held here.*at most 4 are held per backend/);
      await expect(held[1]!.take()).rejects.toThrow(/not held here/);
      expect(restoredCounts(await held[5]!.take())).toEqual(KEYS.map((_, i) => i + 7));
      expect(restoredCounts(await held[2]!.take())).toEqual(KEYS.map((_, i) => i + 4));
    });

    it('outlive their backend: a subtask that ends while its acknowledged state is still being written loses nothing', async () => {
      const { h } = await startedBackend();
      writeAll(h, (i) => i + 9);
      const held = (await h.b.snapshot({ checkpointId: 2, incremental: false, hold: true })()) as HeldKeyedStateSnapshot;
      h.b.dispose(); // drops the replica once its snapshots went through
      await new Promise((r) => setTimeout(r, 50));
      const s = await held.take();
      expect(restoredCounts(s)).toEqual(KEYS.map((_, i) => i + 9));
    });

    it('a write that fails (no such directory) names the path; the replica goes on', async () => {
      const { h } = await startedBackend();
      writeAll(h, (i) => i + 1);
      const held = (await h.b.snapshot({ checkpointId: 2, incremental: false, hold: true })()) as HeldKeyedStateSnapshot;
      const missing = join(tempDir(), 'gone', 'state');
      await expect(held.writeFile(missing, '0123456789abcdef')).rejects.toThrow(/ENOENT.*gone/);
      writeAll(h, (i) => i + 2);
      const next = (await h.b.snapshot({ checkpointId: 3, incremental: false, hold: true })()) as HeldKeyedStateSnapshot;
      expect(restoredCounts(await next.take())).toEqual(KEYS.map((_, i) => i + 2));
    });

    it('are lost with a snapshot thread that dies: using one fails with a clear error, and the next snapshot starts over', async () => {
      const { thread, h } = await startedBackend();
      writeAll(h, (i) => i + 3);
      const held = (await h.b.snapshot({ checkpointId: 2, incremental: false, hold: true })()) as HeldKeyedStateSnapshot;
      await thread.stop();
      await expect(held.writeFile(join(tempDir(), 'x'), '0123456789abcdef')).rejects.toThrow(/snapshot thread that held the full snapshot at position \d+ is gone/);
      writeAll(h, (i) => i + 4);
      const s = await h.b.snapshot({ checkpointId: 3, incremental: false, hold: true })(); // resets the replica: captured here
      expect(restoredCounts(s instanceof HeldKeyedStateSnapshot ? await s.take() : (s as KeyedStateSnapshot))).toEqual(KEYS.map((_, i) => i + 4));
    });
  });
});

