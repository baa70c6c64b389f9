import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import { streamElementQueue, type AsyncRecordEntry, type QueueOutput } from './stream-element-queue.js';

type Emitted = { kind: 'record'; value: string; ts: number } | { kind: 'watermark'; wm: number };

function collector(): { out: QueueOutput<string>; emitted: Emitted[] } {
  const emitted: Emitted[] = [];
  return {
    emitted,
    out: {
      record: (results, ts) => {
        for (const r of results) emitted.push({ kind: 'record', value: r, ts });
      },
      watermark: (wm) => emitted.push({ kind: 'watermark', wm }),
    },
  };
}

describe('stream element queue', () => {
  it('ordered: results leave in input order, watermarks in their place', () => {
    const q = streamElementQueue<string>(true, 10);
    const { out, emitted } = collector();
    const a = q.addRecord('a', 1);
    const b = q.addRecord('b', 2);
    q.addWatermark(2);
    const c = q.addRecord('c', 3);
    expect(q.size).toBe(4);
    q.complete(b, ['b1', 'b2']);
    q.complete(c, []);
    expect(q.emitCompleted(out)).toBe(0);
    q.complete(a, ['a1']);
    expect(q.emitCompleted(out)).toBe(4);
    expect(emitted).toEqual([
      { kind: 'record', value: 'a1', ts: 1 },
      { kind: 'record', value: 'b1', ts: 2 },
      { kind: 'record', value: 'b2', ts: 2 },
      { kind: 'watermark', wm: 2 },
    ]);
    expect(q.size).toBe(0);
  });

  it('unordered: results leave as they complete, never across a watermark', () => {
    const q = streamElementQueue<string>(false, 10);
    const { out, emitted } = collector();
    const a = q.addRecord('a', 1);
    const b = q.addRecord('b', 2);
    q.addWatermark(2);
    const c = q.addRecord('c', 3);
    q.complete(c, ['c1']);
    q.complete(b, ['b1']);
    // b goes at once; c waits behind the watermark, which waits for a.
    expect(q.emitCompleted(out)).toBe(1);
    expect(emitted).toEqual([{ kind: 'record', value: 'b1', ts: 2 }]);
    expect(q.records().map((e) => e.value)).toEqual(['a', 'c']);
    q.complete(a, ['a1']);
    expect(q.emitCompleted(out)).toBe(3);
    expect(emitted.slice(1)).toEqual([
      { kind: 'record', value: 'a1', ts: 1 },
      { kind: 'watermark', wm: 2 },
      { kind: 'record', value: 'c1', ts: 3 },
    ]);
    expect(q.size).toBe(0);
  });

  it('full at capacity, watermarks included; records() lists the completed but not emitted too', () => {
    for (const ordered of [true, false]) {
      const q = streamElementQueue<string>(ordered, 3);
      const a = q.addRecord('a', 1);
      q.addWatermark(1);
      expect(q.isFull()).toBe(false);
      const b = q.addRecord('b', 2);
      expect(q.isFull()).toBe(true);
      q.complete(b, ['b1']);
      // ordered: b waits for a; unordered: b waits for the watermark, which waits for a.
      expect(q.emitCompleted(collector().out)).toBe(0);
      expect(q.records().map((e) => e.value).sort()).toEqual(['a', 'b']);
      q.complete(a, []);
      expect(q.emitCompleted(collector().out)).toBe(3);
      expect(q.isFull()).toBe(false);
    }
  });

  it('randomized against a model: every result once, order and watermark rules hold (seeded)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = seededRandom(seed);
      for (const ordered of [true, false]) {
        const q = streamElementQueue<string>(ordered, 1_000);
        const { out, emitted } = collector();
        const open: AsyncRecordEntry<string>[] = [];
        let next = 0;
        let wm = 0;
        for (let step = 0; step < 300; step++) {
          const r = rnd();
          if (r < 0.45) open.push(q.addRecord(`r${next}`, next++));
          else if (r < 0.55) q.addWatermark(++wm * 1_000_000 + next);
          else if (open.length > 0) {
            const [e] = open.splice(Math.floor(rnd() * open.length), 1);
            q.complete(e!, [`${e!.value as string}`]);
          }
          q.emitCompleted(out);
        }
        for (const e of open.splice(0)) q.complete(e, [`${e.value as string}`]);
        q.emitCompleted(out);
        expect(q.size, `seed ${seed}`).toBe(0);
        const records = emitted.filter((e) => e.kind === 'record').map((e) => (e as { ts: number }).ts);
        expect([...records].sort((x, y) => x - y), `seed ${seed}`).toEqual(Array.from({ length: next }, (_, i) => i));
        if (ordered) expect(records, `seed ${seed}`).toEqual([...records].sort((x, y) => x - y));
        // No record after a watermark that was added after it (the watermark's value encodes the records before it).
        let lastWatermarkBefore = 0;
        for (const e of emitted) {
          if (e.kind === 'watermark') lastWatermarkBefore = e.wm % 1_000_000;
          else expect(e.ts >= lastWatermarkBefore, `seed ${seed}: record ${e.ts} after a watermark that followed it`).toBe(true);
        }
      }
    }
  });
});
