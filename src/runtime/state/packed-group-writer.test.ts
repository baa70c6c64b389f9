import { describe, expect, it } from 'vitest';
import { PackedGroupWriter } from './packed-group-writer.js';
import { createStatePackr } from './serializer.js';

const packr = createStatePackr();
const pack = (v: unknown): Uint8Array => packr.pack(v);

describe('packed group writer', () => {
  const values: unknown[] = [
    1, -2.5, 'text', null, true, 10n, [1, 'a'], new Uint8Array([1, 2]),
    { count: 1, sum: 2.5 }, { other: 'shape' }, { count: 3, sum: 4 },
    [{ a: 1 }, { a: 2 }, { b: [{ a: 3 }] }], { nested: { deeper: { a: 1 } }, list: [{ x: 1 }, { x: 2 }] },
    new Map<unknown, unknown>([[1, { a: 1 }]]), new Set(['x']), new Date(5),
  ];

  it('writes a group that unpacks to the map of its entries, values with records included', () => {
    const w = new PackedGroupWriter(false);
    const expected = new Map<unknown, unknown>();
    values.forEach((v, i) => {
      const key = i % 2 === 0 ? i : `key-${i}`;
      w.add(pack(key), pack(v));
      expected.set(key, v);
    });
    expect(packr.unpack(w.finish()!)).toEqual(expected);
  });

  it('groups the namespaces of each key, for any number of keys and namespaces', () => {
    for (const [keys, namespaces] of [
      [1, 1],
      [20, 3],
      [3, 20],
      [70_000, 1],
      [2, 70_000],
    ] as const) {
      const w = new PackedGroupWriter(true);
      const expected = new Map<unknown, Map<number, unknown>>();
      for (let k = 0; k < keys; k++) {
        const byNs = new Map<number, unknown>();
        for (let n = 0; n < namespaces; n++) {
          const v = values[(k + n) % values.length];
          w.addNamespaced(pack(k * 7), pack(n * 1000 - 5), pack(v));
          byNs.set(n * 1000 - 5, v);
        }
        expected.set(k * 7, byNs);
      }
      expect(packr.unpack(w.finish()!), `${keys} keys x ${namespaces} namespaces`).toEqual(expected);
    }
  });

  it('gives undefined for an empty group and refuses entries of the wrong kind', () => {
    expect(new PackedGroupWriter(true).finish()).toBeUndefined();
    expect(new PackedGroupWriter(false).finish()).toBeUndefined();
    expect(() => new PackedGroupWriter(true).add(pack(1), pack(2))).toThrow(/namespace/);
    expect(() => new PackedGroupWriter(false).addNamespaced(pack(1), pack(0), pack(2))).toThrow(/namespace/);
  });
});

describe('packed group writer, reused', () => {
  it('writes every group after a reset exactly as a new writer does (views into its buffer: what a spilled snapshot writes)', () => {
    const reused = new PackedGroupWriter(true);
    for (const [keys, namespaces] of [
      [3, 2],
      [40, 1],
      [0, 0],
      [70_000, 1],
      [1, 1],
    ] as const) {
      reused.reset();
      const fresh = new PackedGroupWriter(true);
      for (let k = 0; k < keys; k++) {
        for (let n = 0; n < namespaces; n++) {
          for (const w of [reused, fresh]) w.addNamespaced(pack(`k${k}`), pack(n), pack(k + n));
        }
      }
      const expected = fresh.finish();
      const view = reused.finishView();
      expect(view === undefined ? undefined : Buffer.from(view).toString('hex'), `${keys} keys x ${namespaces} namespaces`).toBe(expected === undefined ? undefined : Buffer.from(expected).toString('hex'));
    }
  });
});
