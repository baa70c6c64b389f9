import { assert } from '../../util/assert.js';

/**
 * Writes a key group in the canonical snapshot format (a msgpack map key -> value, or key ->
 * (namespace -> value) in a namespaced state) from bytes that are msgpack already: the keys,
 * namespaces and values the on-disk store holds. Nothing is decoded; bytes are copied once
 * into the group. Each value must be one complete msgpack message, as the store writes them
 * (a value with msgpackr records carries its record definitions, so values can follow one
 * another in a group). Namespaced entries come key by key (the store's order), each key's
 * namespaces together. A writer can be `reset` and used for the next group, keeping its
 * buffers (a full snapshot spilled to a file packs every key group with the same writers).
 */
export class PackedGroupWriter {
  /** The entries, after room for the group's map header (written right-aligned in it at the end). */
  private outer = new GrowableBytes(MAP_HEADER_BYTES_MAX);
  private inner = new GrowableBytes();
  private outerCount = 0;
  private innerCount = 0;
  private currentKey: Uint8Array | null = null;

  constructor(readonly namespaced: boolean) {}

  /** An entry of a state that is not namespaced. */
  add(key: Uint8Array, value: Uint8Array): void {
    assert(!this.namespaced, 'entries of a namespaced state come with their namespace');
    this.outer.append(key);
    this.outer.append(value);
    this.outerCount++;
  }

  /** An entry of a namespaced state; entries of one key must come one after the other. */
  addNamespaced(key: Uint8Array, namespace: Uint8Array, value: Uint8Array): void {
    assert(this.namespaced, 'entries of a state that is not namespaced have no namespace');
    if (this.currentKey === null || !sameBytes(this.currentKey, key)) {
      this.closeKey();
      this.currentKey = Uint8Array.prototype.slice.call(key);
    }
    this.inner.append(namespace);
    this.inner.append(value);
    this.innerCount++;
  }

  /** The packed group, or undefined when it has no entry: a copy of its own. */
  finish(): Uint8Array | undefined {
    const view = this.finishView();
    return view === undefined ? undefined : Uint8Array.prototype.slice.call(view);
  }

  /** As `finish`, as a view into the writer's buffer: valid until the writer is reset. */
  finishView(): Uint8Array | undefined {
    this.closeKey();
    if (this.outerCount === 0) return undefined;
    const header = mapHeader(this.outerCount);
    const bytes = this.outer.view();
    const start = MAP_HEADER_BYTES_MAX - header.length;
    bytes.set(header, start);
    return bytes.subarray(start);
  }

  /** Forgets the group, to write the next one with the same buffers. */
  reset(): void {
    this.outer.clear(MAP_HEADER_BYTES_MAX);
    this.inner.clear();
    this.outerCount = 0;
    this.innerCount = 0;
    this.currentKey = null;
  }

  private closeKey(): void {
    if (this.currentKey === null) return;
    this.outer.append(this.currentKey);
    this.outer.append(mapHeader(this.innerCount));
    this.outer.append(this.inner.view());
    this.outerCount++;
    this.inner.clear();
    this.innerCount = 0;
    this.currentKey = null;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The longest msgpack map header (map 32). */
const MAP_HEADER_BYTES_MAX = 5;

/** The smallest msgpack map header for `count` entries. */
function mapHeader(count: number): Uint8Array {
  if (count < 0x10) return Uint8Array.of(0x80 | count);
  if (count < 0x10000) return Uint8Array.of(0xde, count >> 8, count & 0xff);
  return Uint8Array.of(0xdf, (count >>> 24) & 0xff, (count >>> 16) & 0xff, (count >>> 8) & 0xff, count & 0xff);
}

class GrowableBytes {
  private bytes = new Uint8Array(4096);
  length: number;

  /** `reserved`: bytes at the start that are written later. */
  constructor(reserved = 0) {
    this.length = reserved;
  }

  append(b: Uint8Array): void {
    if (this.length + b.length > this.bytes.length) {
      let size = this.bytes.length * 2;
      while (size < this.length + b.length) size *= 2;
      const next = new Uint8Array(size);
      next.set(this.bytes.subarray(0, this.length));
      this.bytes = next;
    }
    this.bytes.set(b, this.length);
    this.length += b.length;
  }

  view(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  clear(reserved = 0): void {
    this.length = reserved;
  }
}
