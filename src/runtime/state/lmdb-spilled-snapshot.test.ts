import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { listState, mapState, valueState, type ListState, type MapState, type ValueState } from '../../api/state-descriptors.js';
import { encode } from '../storage/checksummed-file.js';
import { assignToKeyGroup, keyGroupRangeContains, keyGroupRangeForOperator } from './key-group.js';
import { isKeyedStateFile } from './keyed-state-file.js';
import type { KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { LmdbKeyedStateBackend } from './lmdb-keyed-state-backend.js';
import { packKeyGroups } from './packed-key-groups.js';
import { SpilledKeyedStateSnapshot } from './spilled-keyed-state-snapshot.js';

const root = mkdtempSync(join(tmpdir(), 'sluice-lmdb-spill-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const created: LmdbKeyedStateBackend[] = [];
afterEach(() => {
  for (const b of created.splice(0)) b.dispose();
});

let dirs = 0;
/** A backend in a local directory of its own, so the files it leaves there can be listed. */
function backend(maxParallelism: number, p = 1, i = 0): { b: LmdbKeyedStateBackend; localDir: string } {
  const localDir = join(root, `local-${++dirs}`);
  const b = new LmdbKeyedStateBackend(keyGroupRangeForOperator(maxParallelism, p, i), maxParallelism, () => 0, { localDir, cacheEntriesMax: 100 });
  created.push(b);
  return { b, localDir };
}

/** Value, list (namespaced), map state and timers over `keys` keys, values of about `valueBytes`. */
function fill(b: LmdbKeyedStateBackend, keys: number, valueBytes: number): void {
  const v = b.getOrCreateState(valueState<string>('v'), false) as unknown as ValueState<string>;
  const l = b.getOrCreateState(listState<number>('l'), true) as unknown as ListState<number> & { setCurrentNamespace(n: number): void };
  const m = b.getOrCreateState(mapState<string, number>('m'), false) as unknown as MapState<string, number>;
  b.getOrCreateState(valueState<number>('never-written'), false);
  for (let k = 0; k < keys; k++) {
    const key = k % 2 === 0 ? k : `key-${k}`;
    if (!keyGroupRangeContains(b.keyGroupRange, assignToKeyGroup(key, b.maxParallelism))) continue;
    b.setCurrentKey(key);
    v.update(`${k}:`.padEnd(valueBytes, 'x'));
    if (k % 3 === 0) {
      l.setCurrentNamespace(k % 5);
      l.add(k);
      l.add(-k);
    }
    if (k % 4 === 0) m.put(`m${k}`, k);
    if (k % 7 === 0) b.timerQueue(0).add(1000 + k, key, 0);
  }
}

/** Files in a backend's local directory other than its working directory: spill files. */
function spillFiles(b: LmdbKeyedStateBackend, localDir: string): string[] {
  return readdirSync(localDir).filter((f) => join(localDir, f) !== b.path);
}

/** The same state's snapshot on the heap, as packKeyGroups packs it (what the file held before spilling). */
async function heapPacked(b: LmdbKeyedStateBackend): Promise<{ data: Uint8Array; offsets: number[] }> {
  const s: KeyedStateSnapshot = await b.snapshot({ checkpointId: 1, incremental: false })();
  return packKeyGroups(s);
}

async function spilled(b: LmdbKeyedStateBackend, checkpointId = 2): Promise<SpilledKeyedStateSnapshot> {
  const s = await b.snapshot({ checkpointId, incremental: false, hold: true })();
  expect(s).toBeInstanceOf(SpilledKeyedStateSnapshot);
  return s as SpilledKeyedStateSnapshot;
}

describe('lmdb backend: a full snapshot written to checkpoint storage is spilled key group by key group', () => {
  it.each([
    ['128 key groups, most small or empty', 128, 2, 300, 40],
    ['4 key groups above the 1 MiB chunk', 4, 1, 1200, 4000],
  ])('%s: the state file is byte for byte what packKeyGroups writes (payload, key group offsets, header), moved into place', async (_name, maxP, p, keys, valueBytes) => {
    const { b, localDir } = backend(maxP, p, p - 1);
    fill(b, keys, valueBytes);
    const expected = await heapPacked(b);
    const s = await spilled(b);
    expect(spillFiles(b, localDir)).toEqual([s.path.slice(localDir.length + 1)]);
    expect(s.keyGroupRange).toEqual(b.keyGroupRange);
    expect(s.maxParallelism).toBe(maxP);
    expect(s.keyGroupOffsets).toEqual(expected.offsets);
    expect(s.sizeBytes).toBe(expected.data.length);
    const target = join(root, `state-${dirs}`);
    expect(await s.writeFile(target, '0123456789abcdef')).toBe(s.checksum);
    expect(Buffer.compare(readFileSync(target), encode(expected.data, 'state')), 'the state file').toBe(0);
    expect(spillFiles(b, localDir), 'the spill file was moved').toEqual([]);
    await expect(s.writeFile(`${target}-again`, '0123456789abcdef')).rejects.toThrow(/written, read or discarded already/);
  });

  it('bytes() reads the payload back (inline state, jobmanager storage) and removes the file', async () => {
    const { b, localDir } = backend(128);
    fill(b, 200, 30);
    const expected = await heapPacked(b);
    const s = await spilled(b);
    expect(Buffer.compare(await s.bytes(), expected.data)).toBe(0);
    expect(spillFiles(b, localDir)).toEqual([]);
    await expect(s.bytes()).rejects.toThrow(/written, read or discarded already/);
  });

  it('an incremental checkpoint spills its full base and keeps deltas on the heap', async () => {
    const { b, localDir } = backend(128);
    fill(b, 200, 30);
    const base = await b.snapshot({ checkpointId: 1, incremental: true, hold: true })();
    expect(isKeyedStateFile(base)).toBe(true);
    (base as SpilledKeyedStateSnapshot).discard();
    b.notifyCheckpointComplete(1);
    b.setCurrentKey(4);
    (b.getOrCreateState(valueState<string>('v'), false) as unknown as ValueState<string>).update('changed');
    const delta = await b.snapshot({ checkpointId: 2, incremental: true, hold: true })();
    expect(isKeyedStateFile(delta)).toBe(false);
    expect((delta as KeyedStateSnapshot).baseCheckpointId).toBe(1);
    expect(spillFiles(b, localDir)).toEqual([]);
  });

  it('leaves no spill file behind when dropped: discarded (aborted checkpoint), or the backend disposed while spilling', async () => {
    const { b, localDir } = backend(128);
    fill(b, 2000, 200);
    const s = await spilled(b);
    s.discard();
    s.discard(); // idempotent
    expect(spillFiles(b, localDir)).toEqual([]);
    await expect(s.writeFile(join(root, 'never'), '0123456789abcdef')).rejects.toThrow(/discarded already/);

    const finish = b.snapshot({ checkpointId: 3, incremental: false, hold: true });
    const running = finish();
    // Part-way: once the spill file exists, the backend goes away (its task was canceled).
    for (let turns = 0; spillFiles(b, localDir).length === 0; turns++) {
      expect(turns, 'the spill file appears while the snapshot runs').toBeLessThan(10_000);
      await new Promise<void>((r) => setImmediate(r));
    }
    b.dispose();
    await expect(running).rejects.toThrow(/was disposed/);
    expect(spillFiles(b, localDir)).toEqual([]);
    expect(existsSync(localDir)).toBe(true);
  });

  it('a spill directory that cannot be written fails the snapshot with what to check', async () => {
    const { b, localDir } = backend(128);
    fill(b, 10, 10);
    rmSync(localDir, { recursive: true, force: true });
    writeFileSync(localDir, ''); // a file where the directory was
    await expect(b.snapshot({ checkpointId: 1, incremental: false, hold: true })()).rejects.toThrow(/cannot create a spill file/);
    rmSync(localDir);
  });
});
