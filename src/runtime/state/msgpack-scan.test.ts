import { describe, expect, it } from 'vitest';
import { msgpackElementEnd, msgpackMapHeader, msgpackNumberAt } from './msgpack-scan.js';
import { createStatePackr } from './serializer.js';
import { seededRandom } from '../../testing/seeded-random.js';

const packr = createStatePackr();

describe('msgpack scan', () => {
  const standalone: unknown[] = [
    0, 1, 63, 64, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, 1.5, -2.25, NaN, Infinity,
    '', 'a', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(255), 'x'.repeat(256), 'é'.repeat(40000), 'x'.repeat(70000),
    null, true, false, 10n, -(2n ** 63n), 2n ** 70n, new Date(1_700_000_000_123), new Uint8Array([1, 2, 3]), new Float64Array([1.5, -2]), new Uint8Array(300),
    [], [1, 'a', [2, [3, null]]], Array.from({ length: 20 }, (_, i) => i * 1000), Array.from({ length: 70000 }, (_, i) => i % 7),
    new Map(), new Map<unknown, unknown>([[1, 'a'], ['b', [1, 2]], [3, new Map([[4, 5]])]]), new Map(Array.from({ length: 20 }, (_, i) => [i, i])), [undefined, 1],
  ];
  const notStandalone: unknown[] = [{ a: 1 }, [{ a: 1 }, { a: 2 }], new Set([1, 2]), new Map([[1, { x: 1 }]]), new Error('e'), /re/];

  it('finds the end of every element that stands alone, and its bytes decode to the value', () => {
    for (const v of standalone) {
      const bytes = packr.pack(v);
      expect(msgpackElementEnd(bytes, 0), String(v).slice(0, 30)).toBe(bytes.length);
      // After other elements, too.
      const joined = Buffer.concat([packr.pack('before'), bytes, packr.pack(7)]);
      const start = packr.pack('before').length;
      expect(msgpackElementEnd(joined, start)).toBe(start + bytes.length);
      expect(packr.unpack(joined.subarray(start, start + bytes.length))).toEqual(v);
    }
  });

  it('gives up on records and on extensions that take the next element, and on cut-off bytes', () => {
    for (const v of notStandalone) expect(msgpackElementEnd(packr.pack(v), 0), String(v)).toBe(-1);
    const bytes = packr.pack(['x'.repeat(100), 1]);
    for (let cut = 0; cut < bytes.length; cut++) expect(msgpackElementEnd(bytes.subarray(0, cut), 0)).toBe(-1);
  });

  it('reads map headers and numbers as msgpackr wrote them', () => {
    for (const size of [0, 1, 15, 16, 65535, 65536]) {
      const bytes = packr.pack(new Map(Array.from({ length: size }, (_, i) => [i, 0])));
      const h = msgpackMapHeader(bytes, 0)!;
      expect(h.size).toBe(size);
      let pos = h.start;
      for (let i = 0; i < 2 * size; i++) pos = msgpackElementEnd(bytes, pos);
      expect(pos).toBe(bytes.length);
    }
    expect(msgpackMapHeader(packr.pack([1]), 0)).toBeUndefined();
    const rand = seededRandom(7);
    const numbers = [...(standalone.filter((v) => typeof v === 'number') as number[]), ...Array.from({ length: 2000 }, () => (rand() - 0.5) * 2 ** Math.floor(rand() * 60))];
    for (const n of numbers) {
      const bytes = packr.pack(n);
      const read = msgpackNumberAt(bytes, 0);
      if (read !== undefined) expect(Object.is(read, packr.unpack(bytes)) || (Number.isNaN(read) && Number.isNaN(n)), `${n}`).toBe(true);
    }
    for (const n of [0, 1, 63, -1, -32, 200, 70000, -200, -70000, 2 ** 31 - 1, -(2 ** 31), 2.5]) expect(msgpackNumberAt(packr.pack(n), 0)).toBe(n);
    expect(msgpackNumberAt(packr.pack('1'), 0)).toBeUndefined();
  });
});
