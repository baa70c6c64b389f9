import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { decode } from '../storage/checksummed-file.js';
import { crc32c } from '../storage/crc32c.js';
import type { KeyedStateSnapshot, StateSnapshot } from './keyed-state-snapshot.js';
import { packKeyGroups, packStateNames } from './packed-key-groups.js';
import { SpillFileWriter } from './spill-file-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-spill-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Spills a snapshot's key groups in order, as the lmdb backend does. */
async function spill(s: KeyedStateSnapshot): Promise<SpillFileWriter> {
  const w = await SpillFileWriter.create(dir, s.keyGroupRange, s.maxParallelism);
  const names = packStateNames(s.states);
  for (let kg = s.keyGroupRange.startKeyGroup; kg <= s.keyGroupRange.endKeyGroup; kg++) {
    await w.append(
      kg,
      names,
      s.states.map((st) => st.groups.get(kg)),
      s.timers.get(kg),
    );
  }
  return w;
}

describe('spill file writer', () => {
  it('writes exactly the keyed state file of packKeyGroups: same payload, key group offsets, checksum (groups of every size, empty key groups, segments above the 1 MiB chunk)', async () => {
    const seed = 0x5b111;
    const random = seededRandom(seed);
    const sizes = [0, 1, 200, 70_000, 600_000, 1_100_000, 3_000_000];
    const bytes = (n: number, salt: number): Uint8Array => {
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = (i * 31 + n + salt) & 0xff;
      return b;
    };
    for (let round = 0; round < 6; round++) {
      const range = { startKeyGroup: 4, endKeyGroup: 4 + 5 + Math.floor(random() * 20) };
      const states: StateSnapshot[] = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => {
        const groups = new Map<number, Uint8Array>();
        for (let kg = range.startKeyGroup; kg <= range.endKeyGroup; kg++) if (random() < 0.5) groups.set(kg, bytes(sizes[Math.floor(random() * sizes.length)]!, kg));
        return { name: `state-${i}`, kind: i % 2 ? 'value' : 'list', namespaced: i === 1, groups };
      });
      const timers = new Map<number, Uint8Array>();
      for (let kg = range.startKeyGroup; kg <= range.endKeyGroup; kg++) if (random() < 0.3) timers.set(kg, bytes(1 + Math.floor(random() * 5000), kg));
      const snapshot: KeyedStateSnapshot = { formatVersion: 1, maxParallelism: 128, keyGroupRange: range, states, timers };
      const expected = packKeyGroups(snapshot);

      const spilled = await (await spill(snapshot)).finish();
      expect(spilled.keyGroupOffsets, `seed ${seed} round ${round}`).toEqual(expected.offsets);
      expect(spilled.sizeBytes, `seed ${seed} round ${round}`).toBe(expected.data.length);
      expect(spilled.checksum).toBe(crc32c(expected.data));
      const file = decode(readFileSync(spilled.path), { file: spilled.path, checkpointId: undefined, expectedKind: 'state' });
      expect(Buffer.compare(file.payload, expected.data), `seed ${seed} round ${round}: payload`).toBe(0);
      spilled.discard();
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an aborted spill leaves no file; key groups must come in order and all of them', async () => {
    const range = { startKeyGroup: 0, endKeyGroup: 3 };
    const names = packStateNames([{ name: 's', kind: 'value', namespaced: false }]);
    const w = await SpillFileWriter.create(dir, range, 128);
    await w.append(0, names, [Uint8Array.of(0x80)], undefined);
    await expect(w.append(2, names, [undefined], undefined)).rejects.toThrow(/in order: expected 1, got 2/);
    await expect(w.finish()).rejects.toThrow(/every key group of 0..3/);
    expect(readdirSync(dir)).toHaveLength(1);
    await w.abort();
    expect(readdirSync(dir)).toEqual([]);
    await expect(SpillFileWriter.create(join(dir, 'missing'), range, 128)).rejects.toThrow(/cannot create a spill file .* writable directory/);
  });
});
