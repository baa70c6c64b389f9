import { assert } from '../../util/assert.js';
import type { StateSnapshot } from './keyed-state-snapshot.js';

/**
 * The states and timers of a keyed state snapshot (full or delta) as they cross between the
 * task thread and the snapshot thread: every group's bytes in a few buffers that are
 * transferred, not cloned (a group's bytes are often a view into a much larger buffer, which a
 * structured clone would copy whole). Groups are `[keyGroup, buffer, offset, length]` quads.
 */
export interface SnapshotParts {
  readonly buffers: readonly ArrayBuffer[];
  readonly states: readonly { readonly name: string; readonly kind: string; readonly namespaced: boolean; readonly groups: readonly number[] }[];
  readonly timers: readonly number[];
}

export interface UnpackedParts {
  readonly states: StateSnapshot[];
  readonly timers: Map<number, Uint8Array>;
}

/**
 * Array buffers that went to the snapshot thread and came back, to be written again. Memory
 * the process touches for the first time costs a page fault per 4 KB; on the virtual machines
 * measured here (Firecracker) that is about 10 us, 2.5 ms per MB: copying a q5 delta of 6 MB
 * into a new buffer took 15 ms, into a used one 0.2 ms. Bounded by `maxBytes`.
 */
export class BufferPool {
  private readonly free: ArrayBuffer[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes = 48 << 20) {}

  /** The smallest free buffer of at least `minBytes`, if any. */
  take(minBytes: number): ArrayBuffer | undefined {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const b = this.free[i]!;
      if (b.byteLength >= minBytes && (best < 0 || b.byteLength < this.free[best]!.byteLength)) best = i;
    }
    if (best < 0) return undefined;
    const [b] = this.free.splice(best, 1);
    this.bytes -= b!.byteLength;
    return b;
  }

  give(buffers: readonly ArrayBuffer[]): void {
    for (const b of buffers) {
      if (b.byteLength === 0 || this.bytes + b.byteLength > this.maxBytes) continue; // detached, or over the bound
      this.free.push(b);
      this.bytes += b.byteLength;
    }
  }

  get freeBytes(): number {
    return this.bytes;
  }
}

/**
 * Where one snapshot's groups are written for the snapshot thread: chunks of at least
 * `chunkBytes` (from a pool when it has them), handed out as views at 8-byte aligned offsets
 * (a columns group is read as a Float64Array there). The chunks become the parts' buffers.
 */
export class TransferArena {
  readonly buffers: ArrayBuffer[] = [];
  private readonly index = new Map<ArrayBufferLike, number>();
  private chunk: Uint8Array | undefined;
  private at = 0;

  constructor(
    private readonly pool?: BufferPool,
    private readonly chunkBytes = 4 << 20,
  ) {}

  /** `n` bytes at an 8-byte aligned offset of a chunk. */
  alloc(n: number): Uint8Array {
    let start = (this.at + 7) & ~7;
    if (this.chunk === undefined || start + n > this.chunk.length) {
      const size = Math.max(n, this.chunkBytes);
      const buffer = this.pool?.take(size) ?? new ArrayBuffer(size);
      this.index.set(buffer, this.buffers.length);
      this.buffers.push(buffer);
      this.chunk = new Uint8Array(buffer);
      start = 0;
    }
    this.at = start + n;
    return this.chunk.subarray(start, start + n);
  }

  copy(bytes: Uint8Array): Uint8Array {
    const out = this.alloc(bytes.length);
    out.set(bytes);
    return out;
  }

  /** The index of the chunk `bytes` is in, or -1. */
  chunkOf(bytes: Uint8Array): number {
    return this.index.get(bytes.buffer) ?? -1;
  }
}

/**
 * The groups of `states` and `timers` as parts: with an arena, groups written into it stay
 * where they are and the others are copied into it (the caller must not use the groups once
 * the parts are transferred); without one, every group is copied into one new buffer.
 */
export function toSnapshotParts(states: readonly StateSnapshot[], timers: ReadonlyMap<number, Uint8Array>, arena?: TransferArena): SnapshotParts {
  if (arena === undefined) {
    let total = 0;
    for (const st of states) for (const b of st.groups.values()) total += (b.length + 7) & ~7;
    for (const b of timers.values()) total += (b.length + 7) & ~7;
    arena = new TransferArena(undefined, total);
  }
  const a = arena;
  const place = (quads: number[], kg: number, bytes: Uint8Array): void => {
    let chunk = a.chunkOf(bytes);
    if (chunk < 0) {
      bytes = a.copy(bytes);
      chunk = a.chunkOf(bytes);
    }
    quads.push(kg, chunk, bytes.byteOffset, bytes.length);
  };
  const partsStates = states.map((st) => {
    const groups: number[] = [];
    for (const [kg, bytes] of st.groups) place(groups, kg, bytes);
    return { name: st.name, kind: st.kind, namespaced: st.namespaced, groups };
  });
  const partsTimers: number[] = [];
  for (const [kg, bytes] of timers) place(partsTimers, kg, bytes);
  return { buffers: a.buffers, states: partsStates, timers: partsTimers };
}

/** Views into the parts' buffers (nothing is copied). */
export function fromSnapshotParts(parts: SnapshotParts): UnpackedParts {
  const view = (quads: readonly number[]): Map<number, Uint8Array> => {
    assert(quads.length % 4 === 0, 'groups are [keyGroup, buffer, offset, length] quads');
    const groups = new Map<number, Uint8Array>();
    for (let i = 0; i < quads.length; i += 4) {
      const buffer = parts.buffers[quads[i + 1]!];
      const offset = quads[i + 2]!;
      const length = quads[i + 3]!;
      assert(buffer !== undefined && offset >= 0 && offset + length <= buffer.byteLength, `group bytes [${offset}, ${offset + length}) inside transfer buffer ${quads[i + 1]} of ${buffer?.byteLength ?? 'none'} bytes`);
      groups.set(quads[i]!, Buffer.from(buffer, offset, length));
    }
    return groups;
  };
  return {
    states: parts.states.map((st) => ({ name: st.name, kind: st.kind, namespaced: st.namespaced, groups: view(st.groups) })),
    timers: view(parts.timers),
  };
}
