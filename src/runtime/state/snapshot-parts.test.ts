import { describe, expect, it } from 'vitest';
import { BufferPool, fromSnapshotParts, toSnapshotParts, TransferArena } from './snapshot-parts.js';

const bytes = (...xs: number[]) => Uint8Array.from(xs);

describe('snapshot parts', () => {
  it('without an arena, copies every group into one buffer; the views read back the same bytes', () => {
    const source = new Uint8Array(100).fill(9); // groups are views into a larger buffer
    const states = [{ name: 's', kind: 'value', namespaced: false, groups: new Map([[3, source.subarray(10, 13)], [5, bytes()]]) }];
    const parts = toSnapshotParts(states, new Map([[3, bytes(1, 2, 3, 4, 5)]]));
    expect(parts.buffers).toHaveLength(1);
    const back = fromSnapshotParts(parts);
    expect([...back.states[0]!.groups].map(([kg, b]) => [kg, [...b]])).toEqual([[3, [9, 9, 9]], [5, []]]);
    expect([...back.timers.get(3)!]).toEqual([1, 2, 3, 4, 5]);
  });

  it('an arena hands out 8-byte aligned views in chunks, groups written into it stay in place, others are copied in', () => {
    const arena = new TransferArena(undefined, 64);
    const a = arena.alloc(13);
    const b = arena.alloc(40);
    const c = arena.alloc(30); // does not fit the first chunk
    expect([a.byteOffset, b.byteOffset, c.byteOffset]).toEqual([0, 16, 0]);
    expect([arena.chunkOf(a), arena.chunkOf(b), arena.chunkOf(c), arena.chunkOf(bytes(1))]).toEqual([0, 0, 1, -1]);
    a.fill(1);
    c.fill(3);
    const parts = toSnapshotParts([{ name: 's', kind: 'value', namespaced: true, groups: new Map([[0, a], [1, c]]) }], new Map([[7, bytes(4, 4)]]), arena);
    expect(parts.buffers).toBe(arena.buffers);
    expect(parts.states[0]!.groups).toEqual([0, 0, 0, 13, 1, 1, 0, 30]);
    const back = fromSnapshotParts(parts);
    expect([...back.states[0]!.groups.get(0)!]).toEqual(Array(13).fill(1));
    expect([...back.states[0]!.groups.get(1)!]).toEqual(Array(30).fill(3));
    expect([...back.timers.get(7)!]).toEqual([4, 4]);
  });

  it('a pool gives back the smallest buffer that fits, and keeps no more than its bound', () => {
    const pool = new BufferPool(100);
    pool.give([new ArrayBuffer(40), new ArrayBuffer(20), new ArrayBuffer(30), new ArrayBuffer(50), new ArrayBuffer(0)]);
    expect(pool.freeBytes).toBe(90); // the 50-byte one is over the bound, the detached one is dropped
    expect(pool.take(25)?.byteLength).toBe(30);
    expect(pool.take(45)).toBeUndefined();
    const arena = new TransferArena(pool, 16);
    arena.alloc(10);
    expect(arena.buffers[0]!.byteLength).toBe(20); // taken from the pool
    expect(pool.freeBytes).toBe(40);
  });
});
