import type { Packr, Unpackr } from 'msgpackr';
import { NO_TIMESTAMP, type RecordBatch } from '../../runtime/channel/stream-element.js';
import { assert } from '../../util/assert.js';
import { FRAME_HEADER_BYTES } from './frame-decoder.js';

/**
 * The codec of record batches between TaskManagers: the per-record cost of the data plane.
 *
 * A batch is written as its values, tag by tag. A plain object is written as a shape (its
 * keys, in order) and its values. A shape is defined the first time it crosses the
 * connection and referenced by number afterwards, and each shape has generated code on both
 * ends: the encoder reads the fields by name, the decoder builds the object with a literal,
 * so all records of a shape share one hidden class at the consumer. Short ASCII strings are
 * copied byte by byte (a native call costs more than the copy); longer ones are written by
 * Buffer's UTF-8 writer and marked ASCII when they were, so the reader takes the faster latin1
 * path. (Bundling all strings of a batch into one, as msgpackr does, costs more to build:
 * joining thousands of strings in V8 is slower than writing them one by one.)
 *
 * Strings that repeat (channels, URLs, country codes, event types, words) go through a
 * dictionary of the connection: the first time a string is written it gets an id, later it
 * is written as that id and the reader hands out the string it kept, without reading or
 * allocating anything. Each place a string is written from (a field of a shape, or any other
 * place) learns whether its values repeat: one whose strings mostly miss the dictionary
 * (ids, free text) writes them plainly for a while and then tries again. A full dictionary
 * that keeps missing is cleared at the start of the next frame (a flag in the header), so a
 * drifting set of values gets a fresh one.
 *
 * Values other than plain objects, arrays, strings, numbers, booleans, null and undefined
 * (Maps, Sets, Dates, bigints, typed arrays, class instances...) are written by msgpackr as
 * before (state packr settings: self-contained), so a record arrives as it was sent.
 *
 * Layout after the frame's length: MARKER, channel u32, count u32, flags u8 (FLAG_TIMESTAMPS:
 * count float64 follow; FLAG_KEY_GROUPS: then count u16, the records' key groups, from a
 * keyBy; FLAG_DICTIONARY_RESET: the dictionary is cleared before the values), values.
 * Numbers in the value stream are little-endian.
 */

/** First payload byte of a record batch frame: never the first byte of a msgpack message. */
export const RECORD_BATCH_MARKER = 0xc1;

const TAG_UNDEFINED = 0;
const TAG_NULL = 1;
const TAG_FALSE = 2;
const TAG_TRUE = 3;
const TAG_UINT8 = 4;
const TAG_INT32 = 5;
const TAG_FLOAT64 = 6;
/** Byte length u8, then that many ASCII bytes. */
const TAG_ASCII8 = 7;
const TAG_ARRAY = 8;
/** Shape id u16, then the values of its fields. */
const TAG_SHAPE = 9;
/** Shape id u16, field count u16, the keys (as TAG_STRING), then the values of the fields. */
const TAG_NEW_SHAPE = 10;
/** Length u32, then a msgpack message. */
const TAG_MSGPACK = 11;
/** Byte length u32, then ASCII bytes. */
const TAG_ASCII32 = 12;
/** Byte length u32, then UTF-8 bytes. */
const TAG_UTF8 = 13;
/** Dictionary id u16: a string defined earlier on this connection. */
const TAG_DICTIONARY = 14;
/** Dictionary id u16 (the next one), then the string (TAG_ASCII8, TAG_ASCII32 or TAG_UTF8): defines it. */
const TAG_DICTIONARY_NEW = 15;
/** Element count u8, then the elements: an array of fewer than 256 (a tuple). TAG_ARRAY: count u32. */
const TAG_ARRAY8 = 16;

const FLAG_TIMESTAMPS = 1;
const FLAG_DICTIONARY_RESET = 2;
const FLAG_KEY_GROUPS = 4;

/** Strings the dictionary of one connection direction holds at most (ids are u16). */
export const DICTIONARY_MAX_ENTRIES = 0xffff;
/** Longer strings are always written plainly (they seldom repeat and would cost memory). */
export const DICTIONARY_MAX_STRING_CHARS = 256;
/** UTF-16 units the dictionary holds at most, all strings together (8 MB at two bytes a unit). */
const DICTIONARY_MAX_CHARS = 4 << 20;
/** A site's strings are judged in windows of this many... */
const SITE_WINDOW = 1024;
/** ...and it writes plainly when fewer than this many of a window hit the dictionary... */
const SITE_MIN_HITS = 256;
/** ...for this many strings, then tries again. */
const SITE_PLAIN_STRINGS = 64 * 1024;

/** A place strings are written from: a field of a shape, or everything else. */
interface StringSite {
  /** Strings of the current window, and how many of them were in the dictionary. */
  lookups: number;
  hits: number;
  /** Strings still to write plainly before the dictionary is tried again. */
  plain: number;
  /** The dictionary generation the window started in. */
  generation: number;
}

function newSite(generation: number): StringSite {
  return { lookups: 0, hits: 0, plain: 0, generation };
}

/** Node's Buffer methods without argument checks (stable since Node 0.x, not in @types/node). */
interface FastBuffer extends Buffer {
  utf8Write(s: string, offset: number): number;
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** Shape ids are u16. */
export const MAX_SHAPES = 0xffff;
/**
 * Shapes an encoder defines (each costs generated code on both ends). Objects used as
 * dictionaries (`{[userId]: n}`) make a new shape per record: past this many shapes, or past
 * MAX_FIELDS keys, objects are written by msgpackr instead.
 */
export const DEFAULT_MAX_SHAPES = 1024;
export const MAX_FIELDS = 256;
const MAX_DEPTH = 64;
/** Shapes the encoder tries before it builds a record's signature. */
const RECENT_SHAPES = 4;

interface EncoderShape {
  readonly id: number;
  readonly keys: readonly string[];
  readonly write: (o: Record<string, unknown>, e: RecordBatchEncoder, depth: number) => void;
}

/** Bytes of a slab the encoder writes frames into (a frame larger than this gets a slab of its own). */
const SLAB_BYTES = 1024 * 1024;

/**
 * Writes record batches of one direction of one connection (shape ids are per connection:
 * frames must reach the decoder in the order they were encoded).
 *
 * Frames are written one after another into a slab and handed out as views of it, so a frame
 * is never copied: the bytes of a frame handed out are never written again, and a slab that
 * is full is replaced and left to the frames that still reference it (the socket releases
 * them once written).
 */
export class RecordBatchEncoder {
  private buffer = Buffer.allocUnsafeSlow(SLAB_BYTES) as FastBuffer;
  private view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
  /** `buffer.byteLength`, kept in a field: the typed array's getter is not free on the per-value path. */
  private limit = SLAB_BYTES;
  /** Where the frame being written starts in `buffer`. */
  private frameStart = 0;
  private position = 0;
  private readonly shapes: EncoderShape[] = [];
  private readonly shapesByKeys = new Map<string, EncoderShape>();
  /**
   * The shapes written last, newest first (at most RECENT_SHAPES): a stream of a few record
   * kinds (Nexmark's bids, auctions and people) finds each kind's shape here, checked without
   * allocating its keys, instead of building and looking up a signature at every change.
   */
  private readonly recent: EncoderShape[] = [];
  /** The connection's dictionary: string -> id, and the strings by id. */
  private readonly dictionary = new Map<string, number>();
  private readonly dictionaryStrings: string[] = [];
  private dictionaryChars = 0;
  /** Strings not added since the dictionary filled up; past its size, it is cleared. */
  private dictionaryRefused = 0;
  private dictionaryResetDue = false;
  /** Times the dictionary was cleared. */
  private dictionaryGeneration = 0;
  /** The site of strings not in a field of a shape (top-level values, array elements, keys). */
  private readonly anySite = newSite(0);

  /** `maxShapes`: shapes this encoder defines at most (lower only in tests). */
  constructor(
    private readonly fallback: Packr,
    private readonly maxShapes = DEFAULT_MAX_SHAPES,
  ) {
    assert(maxShapes >= 0 && maxShapes <= MAX_SHAPES, `at most ${MAX_SHAPES} shapes fit a shape id`);
  }

  /** The whole frame (its length header included) of a batch on channel `channel`. */
  encodeFrame(channel: number, batch: RecordBatch): Buffer {
    const { values, timestamps, keyGroups } = batch;
    const count = values.length;
    const keyed = keyGroups !== undefined;
    let timed = false;
    // Cleared at the start of a frame, so the reader clears its own at the same point.
    const reset = this.dictionaryResetDue;
    if (reset) this.clearDictionary();
    for (let j = 0; j < count; j++) {
      if (timestamps[j] !== NO_TIMESTAMP) {
        timed = true;
        break;
      }
    }
    const head = FRAME_HEADER_BYTES + 1 + 4 + 4 + 1 + (timed ? 8 * count : 0) + (keyed ? 2 * count : 0);
    // A slab grown for a large frame is not kept for the small ones after it.
    if (this.position + head > this.buffer.byteLength || this.buffer.byteLength > 4 * SLAB_BYTES) this.newSlab(head);
    const start = this.position;
    this.frameStart = start;
    const buffer = this.buffer;
    const view = this.view;
    let at = start + FRAME_HEADER_BYTES;
    buffer[at++] = RECORD_BATCH_MARKER;
    view.setUint32(at, channel, true);
    view.setUint32(at + 4, count, true);
    buffer[at + 8] = (timed ? FLAG_TIMESTAMPS : 0) | (reset ? FLAG_DICTIONARY_RESET : 0) | (keyed ? FLAG_KEY_GROUPS : 0);
    at += 9;
    if (timed) {
      for (let j = 0; j < count; j++) view.setFloat64(at + 8 * j, timestamps[j]!, true);
      at += 8 * count;
    }
    if (keyed) {
      assert(keyGroups.length === count, 'a batch has a key group per record');
      for (let j = 0; j < count; j++) {
        const kg = keyGroups[j]!;
        buffer[at + 2 * j] = kg & 0xff;
        buffer[at + 2 * j + 1] = kg >>> 8;
      }
      at += 2 * count;
    }
    this.position = at;
    const shapesBefore = this.shapes.length;
    const stringsBefore = this.dictionaryStrings.length;
    let i = 0;
    try {
      for (; i < count; i++) this.value(values[i], 0);
    } catch (e) {
      // Shapes and strings defined in a frame that is not sent must not be referenced later
      // (a reset stays due: the reader has not cleared its dictionary).
      this.forgetShapesFrom(shapesBefore);
      this.forgetStringsFrom(stringsBefore);
      this.position = this.frameStart;
      throw new RecordEncodeError(
        `record ${i} of a batch for another TaskManager cannot be sent: ${(e as Error).message}. Records that cross ` +
          'TaskManagers carry data (plain objects, arrays, strings, numbers, booleans, null, undefined, Map, Set, Date, ' +
          'bigint, typed arrays; class instances arrive as plain objects): create functions and symbols in the operator that uses them',
        { cause: e },
      );
    }
    if (reset) this.dictionaryResetDue = false;
    // The values may have moved the frame to a larger slab.
    const frameStart = this.frameStart;
    const end = this.position;
    this.buffer.writeUInt32BE(end - frameStart - FRAME_HEADER_BYTES, frameStart);
    const frame = this.buffer.subarray(frameStart, end);
    // The next frame starts 8-byte aligned (its timestamps are float64s).
    this.position = Math.min((end + 7) & ~7, this.buffer.byteLength);
    return frame;
  }

  /** Starts a fresh slab with room for at least `bytes`, before a frame is written. */
  private newSlab(bytes: number): void {
    this.buffer = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, bytes)) as FastBuffer;
    this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
    this.limit = this.buffer.byteLength;
    this.position = 0;
    this.frameStart = 0;
  }

  /** Strings in the dictionary now (for tests and diagnostics). */
  get dictionarySize(): number {
    return this.dictionaryStrings.length;
  }

  /** Writes one value; `depth` guards against cycles. Called by the generated shape writers. */
  value(v: unknown, depth: number): void {
    // Comparisons with `typeof`, not a switch on it: TurboFan turns each into a type check,
    // while a switch calls the Typeof builtin for every value (1.6% of a TaskManager's CPU on
    // word count).
    if (typeof v === 'number') {
      this.number(v);
    } else if (typeof v === 'string') {
      this.string(v, this.anySite);
    } else if (typeof v === 'object') {
      if (v === null) {
        this.ensure(1);
        this.buffer[this.position++] = TAG_NULL;
        return;
      }
      if (depth < MAX_DEPTH) {
        const c = (v as object).constructor;
        if (c === Object) {
          if (this.object(v as Record<string, unknown>, depth + 1)) return;
        } else if (c === Array) {
          this.array(v as unknown[], depth + 1);
          return;
        }
      }
      this.msgpack(v);
    } else if (typeof v === 'boolean') {
      this.ensure(1);
      this.buffer[this.position++] = v ? TAG_TRUE : TAG_FALSE;
    } else if (v === undefined) {
      this.ensure(1);
      this.buffer[this.position++] = TAG_UNDEFINED;
    } else if (typeof v === 'function' || typeof v === 'symbol') {
      throw new RecordEncodeError(`it holds a ${typeof v}`);
    } else {
      this.msgpack(v);
    }
  }

  /** Writes a number (called by the generated shape writers too). */
  number(v: number): void {
    this.ensure(9);
    if ((v | 0) === v && (v !== 0 || 1 / v > 0)) {
      if (v >= 0 && v < 0x100) {
        this.buffer[this.position] = TAG_UINT8;
        this.buffer[this.position + 1] = v;
        this.position += 2;
      } else {
        this.buffer[this.position] = TAG_INT32;
        this.view.setInt32(this.position + 1, v, true);
        this.position += 5;
      }
    } else {
      this.buffer[this.position] = TAG_FLOAT64;
      this.view.setFloat64(this.position + 1, v, true);
      this.position += 9;
    }
  }

  /**
   * Writes a string from `site` (the generated shape writers pass their field's): as a
   * dictionary id when the site's strings repeat, plainly otherwise.
   */
  string(s: string, site: StringSite): void {
    if (site.plain > 0) {
      site.plain--;
      this.plainString(s);
      return;
    }
    const chars = s.length;
    if (chars > DICTIONARY_MAX_STRING_CHARS) {
      this.plainString(s);
      return;
    }
    const id = this.dictionary.get(s);
    if (id !== undefined) {
      site.hits++;
      this.ensure(3);
      const buffer = this.buffer;
      const at = this.position;
      buffer[at] = TAG_DICTIONARY;
      buffer[at + 1] = id & 0xff;
      buffer[at + 2] = id >>> 8;
      this.position = at + 3;
    } else if (this.dictionaryStrings.length < DICTIONARY_MAX_ENTRIES && this.dictionaryChars + chars <= DICTIONARY_MAX_CHARS) {
      const next = this.dictionaryStrings.length;
      this.dictionaryStrings.push(s);
      this.dictionary.set(s, next);
      this.dictionaryChars += chars;
      this.ensure(3);
      this.buffer[this.position] = TAG_DICTIONARY_NEW;
      this.view.setUint16(this.position + 1, next, true);
      this.position += 3;
      this.plainString(s);
    } else {
      if (++this.dictionaryRefused >= DICTIONARY_MAX_ENTRIES) this.dictionaryResetDue = true;
      this.plainString(s);
    }
    if (++site.lookups === SITE_WINDOW) {
      if (site.generation !== this.dictionaryGeneration) {
        // The dictionary was cleared during this window: its misses say nothing about the site.
        site.generation = this.dictionaryGeneration;
      } else if (site.hits < SITE_MIN_HITS) {
        // Missing a full dictionary says little about the site: its values may have moved on
        // from the ones kept. Start over; a site whose values do not repeat then misses again
        // with room to spare and writes plainly.
        if (this.dictionaryFull()) this.dictionaryResetDue = true;
        else site.plain = SITE_PLAIN_STRINGS;
      }
      site.lookups = 0;
      site.hits = 0;
    }
  }

  /** Writes a string's characters: ASCII byte by byte when short, else by Buffer's UTF-8 writer. */
  private plainString(s: string): void {
    const chars = s.length;
    this.ensure(5 + 3 * chars);
    const buffer = this.buffer;
    const at = this.position;
    if (chars < 0x20) {
      let i = 0;
      for (; i < chars; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buffer[at + 2 + i] = c;
      }
      if (i === chars) {
        buffer[at] = TAG_ASCII8;
        buffer[at + 1] = chars;
        this.position = at + 2 + chars;
        return;
      }
    }
    const bytes = buffer.utf8Write(s, at + 5);
    // As many bytes as UTF-16 units: every unit took one byte, so every one was ASCII.
    buffer[at] = bytes === chars ? TAG_ASCII32 : TAG_UTF8;
    this.view.setUint32(at + 1, bytes, true);
    this.position = at + 5 + bytes;
  }

  private dictionaryFull(): boolean {
    return this.dictionaryStrings.length >= DICTIONARY_MAX_ENTRIES || this.dictionaryChars + DICTIONARY_MAX_STRING_CHARS > DICTIONARY_MAX_CHARS;
  }

  private clearDictionary(): void {
    this.dictionaryGeneration++;
    this.dictionary.clear();
    this.dictionaryStrings.length = 0;
    this.dictionaryChars = 0;
    this.dictionaryRefused = 0;
  }

  private forgetStringsFrom(id: number): void {
    for (const s of this.dictionaryStrings.splice(id)) {
      this.dictionary.delete(s);
      this.dictionaryChars -= s.length;
    }
  }

  private array(a: unknown[], depth: number): void {
    const n = a.length;
    this.ensure(5);
    if (n < 0x100) {
      this.buffer[this.position] = TAG_ARRAY8;
      this.buffer[this.position + 1] = n;
      this.position += 2;
    } else {
      this.buffer[this.position] = TAG_ARRAY;
      this.view.setUint32(this.position + 1, n, true);
      this.position += 5;
    }
    for (let i = 0; i < n; i++) this.value(a[i], depth);
  }

  /** False when the object must go to msgpackr (too many shapes or fields, a `__proto__` key). */
  private object(o: Record<string, unknown>, depth: number): boolean {
    let shape = this.recentShape(o);
    /** The keys of a shape this record defines. */
    let defined: string[] | undefined;
    if (shape === undefined) {
      const keys = Object.keys(o);
      const signature = keys.join('\u0000');
      shape = this.shapesByKeys.get(signature);
      if (shape === undefined) {
        if (this.shapes.length >= this.maxShapes || keys.length > MAX_FIELDS || keys.includes('__proto__')) return false;
        shape = this.define(keys, signature);
        defined = keys;
      }
      this.recent.unshift(shape);
      if (this.recent.length > RECENT_SHAPES) this.recent.pop();
    }
    this.ensure(5);
    this.buffer[this.position] = defined !== undefined ? TAG_NEW_SHAPE : TAG_SHAPE;
    this.view.setUint16(this.position + 1, shape.id, true);
    this.position += 3;
    if (defined !== undefined) {
      this.view.setUint16(this.position, defined.length, true);
      this.position += 2;
      for (const k of defined) this.plainString(k);
    }
    shape.write(o, this, depth);
    return true;
  }

  /** The recent shape with the keys of `o` (moved to the front), or undefined. */
  private recentShape(o: Record<string, unknown>): EncoderShape | undefined {
    const recent = this.recent;
    for (let i = 0; i < recent.length; i++) {
      const shape = recent[i]!;
      if (!hasKeys(o, shape.keys)) continue;
      if (i > 0) {
        recent.copyWithin(1, 0, i);
        recent[0] = shape;
      }
      return shape;
    }
    return undefined;
  }

  private define(keys: string[], signature: string): EncoderShape {
    // Each field's site sees one type in practice: numbers and strings skip value()'s dispatch.
    // Each field is a string site of its own (bound as s0, s1, ... in the writer's closure).
    const body = keys
      .map((k, i) => `v = o[${JSON.stringify(k)}];\nif (typeof v === 'number') e.number(v); else if (typeof v === 'string') e.string(v, s${i}); else e.value(v, d);`)
      .join('\n');
    const sites = keys.map(() => newSite(this.dictionaryGeneration));
    const write = new Function(...keys.map((_, i) => `s${i}`), `return function (o, e, d) {\nlet v;\n${body}\n};`)(...sites) as EncoderShape['write'];
    const shape: EncoderShape = { id: this.shapes.length, keys, write };
    this.shapes.push(shape);
    this.shapesByKeys.set(signature, shape);
    return shape;
  }

  private forgetShapesFrom(id: number): void {
    for (const s of this.shapes.splice(id)) this.shapesByKeys.delete(s.keys.join('\u0000'));
    this.recent.length = 0;
  }

  private msgpack(v: unknown): void {
    const bytes = this.fallback.pack(v);
    this.ensure(5 + bytes.length);
    this.buffer[this.position] = TAG_MSGPACK;
    this.view.setUint32(this.position + 1, bytes.length, true);
    this.buffer.set(bytes, this.position + 5);
    this.position += 5 + bytes.length;
  }

  private ensure(bytes: number): void {
    if (this.position + bytes > this.limit) this.grow(bytes);
  }

  /** Moves the frame being written to a new slab with room for `bytes` more. */
  private grow(bytes: number): void {
    const written = this.position - this.frameStart;
    const next = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, 2 * (written + bytes))) as FastBuffer;
    this.buffer.copy(next, 0, this.frameStart, this.position);
    this.buffer = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
    this.limit = next.byteLength;
    this.frameStart = 0;
    this.position = written;
  }
}

/**
 * Whether a plain object's own enumerable keys are `keys`, in order (as Object.keys would give
 * them). for...in also visits inherited enumerable keys: a plain object has none unless
 * Object.prototype was given some, and then the count differs and Object.keys decides.
 */
function hasKeys(o: object, keys: readonly string[]): boolean {
  const n = keys.length;
  let i = 0;
  for (const k in o) {
    if (i === n || k !== keys[i]) return false;
    i++;
  }
  return i === n;
}

export class RecordEncodeError extends Error {
  override readonly name = 'RecordEncodeError';
}

export class RecordBatchDecodeError extends Error {
  override readonly name = 'RecordBatchDecodeError';
}

const fromCharCode = String.fromCharCode;

/** An ASCII string of at most 8 bytes without a native call (cheaper than the call at this size). */
function shortAscii(b: Uint8Array, i: number, n: number): string {
  switch (n) {
    case 0:
      return '';
    case 1:
      return fromCharCode(b[i]!);
    case 2:
      return fromCharCode(b[i]!, b[i + 1]!);
    case 3:
      return fromCharCode(b[i]!, b[i + 1]!, b[i + 2]!);
    case 4:
      return fromCharCode(b[i]!, b[i + 1]!, b[i + 2]!, b[i + 3]!);
    case 5:
      return fromCharCode(b[i]!, b[i + 1]!, b[i + 2]!, b[i + 3]!, b[i + 4]!);
    case 6:
      return fromCharCode(b[i]!, b[i + 1]!, b[i + 2]!, b[i + 3]!, b[i + 4]!, b[i + 5]!);
    case 7:
      return fromCharCode(b[i]!, b[i + 1]!, b[i + 2]!, b[i + 3]!, b[i + 4]!, b[i + 5]!, b[i + 6]!);
    default:
      return fromCharCode(b[i]!, b[i + 1]!, b[i + 2]!, b[i + 3]!, b[i + 4]!, b[i + 5]!, b[i + 6]!, b[i + 7]!);
  }
}

type DecoderShape = (d: RecordBatchDecoder) => Record<string, unknown>;

/** What a decoder reads between frames (it keeps no frame alive). */
const NO_BYTES = Buffer.alloc(0) as FastBuffer;

/** Reads the record batches of one direction of one connection, in order. */
export class RecordBatchDecoder {
  private bytes = NO_BYTES;
  private view: DataView = new DataView(new ArrayBuffer(0));
  private position = 0;
  private end = 0;
  private readonly shapes: DecoderShape[] = [];
  /** The connection's dictionary, by id. */
  private readonly dictionary: string[] = [];

  constructor(private readonly fallback: Unpackr) {}

  /** Decodes the payload of a frame whose first byte is RECORD_BATCH_MARKER. */
  decode(payload: Buffer): { channel: number; batch: RecordBatch } {
    this.bytes = payload as FastBuffer;
    this.view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    this.end = payload.byteLength;
    this.position = 0;
    assert(payload[0] === RECORD_BATCH_MARKER, 'a record batch frame starts with its marker');
    this.need(10);
    const channel = this.view.getUint32(1, true);
    const count = this.view.getUint32(5, true);
    let at = 10;
    // Every value takes at least a byte: a damaged count fails here, before anything is allocated.
    if (count > this.end - at) throw new RecordBatchDecodeError(`${count} records in ${this.end - at} bytes`);
    const flags = payload[9]!;
    if ((flags & ~(FLAG_TIMESTAMPS | FLAG_DICTIONARY_RESET | FLAG_KEY_GROUPS)) !== 0) throw new RecordBatchDecodeError(`unknown flags ${flags}`);
    if ((flags & FLAG_DICTIONARY_RESET) !== 0) this.dictionary.length = 0;
    let timestamps: number[];
    if ((flags & FLAG_TIMESTAMPS) !== 0) {
      this.position = at;
      this.need(8 * count);
      timestamps = new Array<number>(count);
      for (let i = 0; i < count; i++) timestamps[i] = this.view.getFloat64(at + 8 * i, true);
      at += 8 * count;
    } else {
      // Filled: an array of doubles from the start (see presizedRecordBatch).
      timestamps = new Array<number>(count).fill(NO_TIMESTAMP);
    }
    let keyGroups: number[] | undefined;
    if ((flags & FLAG_KEY_GROUPS) !== 0) {
      this.position = at;
      this.need(2 * count);
      keyGroups = new Array<number>(count);
      for (let i = 0; i < count; i++) keyGroups[i] = payload[at + 2 * i]! | (payload[at + 2 * i + 1]! << 8);
      at += 2 * count;
    }
    this.position = at;
    const values = new Array<unknown>(count);
    for (let i = 0; i < count; i++) values[i] = this.value();
    if (this.position !== this.end) throw new RecordBatchDecodeError(`${this.end - this.position} bytes left after ${count} records`);
    this.bytes = NO_BYTES;
    return { channel, batch: { kind: 'batch', values, timestamps, keyGroups } };
  }

  /** Reads the `n` elements of an array. */
  private array(n: number): unknown[] {
    if (n > this.end - this.position) throw new RecordBatchDecodeError(`an array of ${n} elements in ${this.end - this.position} bytes`);
    // Tuples as literals: packed arrays, as the job that built them had (`new Array(n)` is
    // holey, and every later read of an element checks for a hole).
    if (n === 2) return [this.value(), this.value()];
    if (n === 3) return [this.value(), this.value(), this.value()];
    const a = new Array<unknown>(n);
    for (let i = 0; i < n; i++) a[i] = this.value();
    return a;
  }

  /** Reads one value. Called by the generated shape readers. */
  value(): unknown {
    this.need(1);
    const tag = this.bytes[this.position++]!;
    switch (tag) {
      case TAG_UINT8:
        this.need(1);
        return this.bytes[this.position++];
      case TAG_ASCII8: {
        this.need(1);
        const n = this.bytes[this.position]!;
        const from = this.position + 1;
        this.position = from;
        this.need(n);
        this.position = from + n;
        return n <= 8 ? shortAscii(this.bytes, from, n) : this.bytes.latin1Slice(from, from + n);
      }
      case TAG_ASCII32:
      case TAG_UTF8: {
        this.need(4);
        const n = this.view.getUint32(this.position, true);
        const from = this.position + 4;
        this.position = from;
        this.need(n);
        this.position = from + n;
        return tag === TAG_ASCII32 ? this.bytes.latin1Slice(from, from + n) : this.bytes.utf8Slice(from, from + n);
      }
      case TAG_SHAPE: {
        this.need(2);
        const id = this.view.getUint16(this.position, true);
        this.position += 2;
        const read = this.shapes[id];
        if (read === undefined) throw new RecordBatchDecodeError(`shape ${id} was never defined on this connection`);
        return read(this);
      }
      case TAG_INT32: {
        this.need(4);
        const v = this.view.getInt32(this.position, true);
        this.position += 4;
        return v;
      }
      case TAG_FLOAT64: {
        this.need(8);
        const v = this.view.getFloat64(this.position, true);
        this.position += 8;
        return v;
      }
      case TAG_UNDEFINED:
        return undefined;
      case TAG_NULL:
        return null;
      case TAG_FALSE:
        return false;
      case TAG_TRUE:
        return true;
      case TAG_ARRAY8:
        this.need(1);
        return this.array(this.bytes[this.position++]!);
      case TAG_ARRAY: {
        this.need(4);
        const n = this.view.getUint32(this.position, true);
        this.position += 4;
        return this.array(n);
      }
      case TAG_DICTIONARY: {
        this.need(2);
        const id = this.view.getUint16(this.position, true);
        this.position += 2;
        const s = this.dictionary[id];
        if (s === undefined) throw new RecordBatchDecodeError(`string ${id} was never defined on this connection`);
        return s;
      }
      case TAG_DICTIONARY_NEW:
        return this.newString();
      case TAG_NEW_SHAPE:
        return this.newShape();
      case TAG_MSGPACK: {
        this.need(4);
        const n = this.view.getUint32(this.position, true);
        this.position += 4;
        this.need(n);
        const v = this.fallback.unpack(this.bytes.subarray(this.position, this.position + n));
        this.position += n;
        return v;
      }
      default:
        throw new RecordBatchDecodeError(`unknown tag ${tag} at byte ${this.position - 1}`);
    }
  }

  private newString(): string {
    this.need(3);
    const id = this.view.getUint16(this.position, true);
    if (id !== this.dictionary.length) throw new RecordBatchDecodeError(`string ${id} defined where string ${this.dictionary.length} was expected`);
    const tag = this.bytes[this.position + 2];
    if (tag !== TAG_ASCII8 && tag !== TAG_ASCII32 && tag !== TAG_UTF8) throw new RecordBatchDecodeError(`string ${id} is defined by tag ${tag}, not a string`);
    this.position += 2;
    const s = this.value() as string;
    if (s.length > DICTIONARY_MAX_STRING_CHARS) throw new RecordBatchDecodeError(`string ${id} is longer than a dictionary string can be`);
    this.dictionary.push(s);
    return s;
  }

  private newShape(): unknown {
    this.need(4);
    const id = this.view.getUint16(this.position, true);
    const n = this.view.getUint16(this.position + 2, true);
    this.position += 4;
    if (n > this.end - this.position) throw new RecordBatchDecodeError(`a shape of ${n} fields in ${this.end - this.position} bytes`);
    if (id !== this.shapes.length) throw new RecordBatchDecodeError(`shape ${id} defined where shape ${this.shapes.length} was expected`);
    const keys: string[] = [];
    for (let i = 0; i < n; i++) {
      const k = this.value();
      if (typeof k !== 'string' || k === '__proto__') throw new RecordBatchDecodeError(`shape ${id} has an invalid key`);
      keys.push(k);
    }
    const body = `return {${keys.map((k) => `${JSON.stringify(k)}: d.value()`).join(', ')}};`;
    const read = new Function('d', body) as DecoderShape;
    this.shapes.push(read);
    return read(this);
  }

  private need(bytes: number): void {
    if (this.position + bytes > this.end) throw new RecordBatchDecodeError(`the frame ends ${this.position + bytes - this.end} bytes early`);
  }
}
