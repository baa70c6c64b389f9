import { describe, expect, it } from 'vitest';
import { createStatePackr } from '../../runtime/state/serializer.js';
import { NO_TIMESTAMP, type RecordBatch } from '../../runtime/channel/stream-element.js';
import { seededRandom } from '../../testing/seeded-random.js';
import { DEFAULT_MAX_SHAPES, DICTIONARY_MAX_ENTRIES, DICTIONARY_MAX_STRING_CHARS, MAX_FIELDS, MAX_SHAPES, RECORD_BATCH_MARKER, RecordBatchDecodeError, RecordBatchDecoder, RecordBatchEncoder } from './record-batch-codec.js';

const pair = () => ({ encoder: new RecordBatchEncoder(createStatePackr()), decoder: new RecordBatchDecoder(createStatePackr()) });
const batchOf = (values: unknown[], timestamps?: number[]): RecordBatch => ({ kind: 'batch', values, timestamps: timestamps ?? values.map(() => NO_TIMESTAMP) });

function roundTrip(values: unknown[], timestamps?: number[], codec = pair()): RecordBatch {
  const frame = codec.encoder.encodeFrame(7, batchOf(values, timestamps));
  expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
  expect(frame[4]).toBe(RECORD_BATCH_MARKER);
  const { channel, batch } = codec.decoder.decode(frame.subarray(4));
  expect(channel).toBe(7);
  return batch;
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe('record batch codec', () => {
  it('carries every kind of value as it was sent', () => {
    const values: unknown[] = [
      0, -0, 1, 255, 256, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53 - 1, 1.5, NaN, Infinity, -Infinity, 1_700_000_000_123,
      '', 'a', 'bid', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(70_000), 'é', 'naïve café', '日本語', '😀 emoji', 'é'.repeat(40),
      true, false, null, undefined,
      [], [1, 'two', [3, [4, null]]], ['word', 1], Array.from({ length: 255 }, (_, i) => i), Array.from({ length: 256 }, (_, i) => i), Array.from({ length: 300 }, (_, i) => i),
      {}, { kind: 'bid', auction: 1000, price: 12.5, url: 'https://example.com/x', extra: '' }, { nested: { deeper: { deepest: [1, { a: 'b' }] } } },
      { 1: 'numeric key', b: 2, 0: 'zero' }, { 'we"ird\nkey': 1, 'with space': 2, '': 3 },
      10n, -(2n ** 70n), new Map<unknown, unknown>([[1, 'a'], ['b', { c: 2 }]]), new Set([1, 'x']), new Date(1_700_000_000_123), new Uint8Array([1, 2, 3]), new Float64Array([1.5]),
      { when: new Date(5), big: 2n ** 64n, tags: new Set(['a']) },
    ];
    const out = roundTrip(values).values;
    expect(out).toEqual(values);
    expect(Object.is(out[1], -0)).toBe(true);
    expect(Object.keys(out[38] as object)).toEqual(Object.keys(values[38] as object));
  });

  it('gives an object the shape of the record before it only when its keys are the same, in the same order', () => {
    const values: unknown[] = [
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
      { b: 'z', a: 3 },
      { a: 4 },
      { a: 5, b: 'w', c: true },
      { a: 6, b: 'v' },
      { 1: 'one', a: 7 },
      { a: 8, 1: 'one' },
      Object.defineProperty({ a: 9, b: 'hidden' }, 'b', { enumerable: false }),
      { a: 10, b: 'u' },
    ];
    const out = roundTrip(values).values;
    expect(out).toEqual(values);
    for (let i = 0; i < values.length; i++) expect(Object.keys(out[i] as object)).toEqual(Object.keys(values[i] as object));
  });

  it('writes class instances, objects without a prototype and __proto__ keys as msgpackr did', () => {
    const packr = createStatePackr();
    const viaMsgpack = (v: unknown): unknown => packr.unpack(packr.pack(v));
    const withProtoKey = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    const noProto = Object.assign(Object.create(null) as object, { a: 1 });
    const values = [new Point(1, 2), withProtoKey, noProto];
    const out = roundTrip(values).values;
    expect(out).toEqual(values.map(viaMsgpack));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('frames handed out stay intact while later ones are written (slabs fill, a large frame gets its own)', () => {
    const codec = pair();
    const random = seededRandom(5);
    const batches: RecordBatch[] = [];
    const frames: Buffer[] = [];
    for (let f = 0; f < 300; f++) {
      // Mostly small frames, some near a slab's size, one far larger, some failing midway.
      const n = f === 150 ? 40_000 : f % 37 === 0 ? 9_000 : 1 + Math.floor(random() * 200);
      const values = Array.from({ length: n }, (_, i) => ({ f, i, s: 'x'.repeat(Math.floor(random() * 90)), u: random() < 0.01 ? 'é' : 'e' }));
      if (f % 53 === 0) {
        expect(() => codec.encoder.encodeFrame(1, batchOf([...values, { bad: () => 1 }]))).toThrow(/cannot be sent/);
      }
      const batch = batchOf(values, values.map((_, i) => (f * 1000 + i) * 1.5));
      batches.push(batch);
      frames.push(codec.encoder.encodeFrame(f, batch));
    }
    for (const [f, frame] of frames.entries()) {
      expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
      const { channel, batch } = codec.decoder.decode(frame.subarray(4));
      expect(channel).toBe(f);
      expect(batch).toEqual(batches[f]);
    }
  });

  it('keeps timestamps, and sends none when no record has one', () => {
    const timed = roundTrip(['a', 'b', 'c'], [5, NO_TIMESTAMP, -1.5]);
    expect(timed.timestamps).toEqual([5, NO_TIMESTAMP, -1.5]);
    const codec = pair();
    const untimed = codec.encoder.encodeFrame(1, batchOf([1, 2]));
    const timedFrame = codec.encoder.encodeFrame(1, batchOf([1, 2], [1, 2]));
    expect(timedFrame.length - untimed.length).toBe(16);
    expect(codec.decoder.decode(untimed.subarray(4)).batch.timestamps).toEqual([NO_TIMESTAMP, NO_TIMESTAMP]);
  });

  it("carries a keyBy's key groups (2 bytes a record) only when the batch has them", () => {
    const codec = pair();
    const keyGroups = [0, 127, 255, 256, 32767];
    const withGroups = codec.encoder.encodeFrame(1, { ...batchOf([1, 2, 3, 4, 5]), keyGroups });
    const without = codec.encoder.encodeFrame(1, batchOf([1, 2, 3, 4, 5]));
    expect(withGroups.length - without.length).toBe(10);
    expect(codec.decoder.decode(withGroups.subarray(4)).batch.keyGroups).toEqual(keyGroups);
    expect(codec.decoder.decode(without.subarray(4)).batch.keyGroups).toBeUndefined();
    const timed = codec.encoder.encodeFrame(1, { ...batchOf(['a', 'b'], [5, 6]), keyGroups: [3, 4] });
    expect(codec.decoder.decode(timed.subarray(4)).batch).toEqual({ kind: 'batch', values: ['a', 'b'], timestamps: [5, 6], keyGroups: [3, 4] });
  });

  it('defines a shape once per connection and references it in later frames', () => {
    const codec = pair();
    const record = (i: number) => ({ kind: 'bid', auction: i, bidder: i * 2, price: i + 0.5 });
    const first = codec.encoder.encodeFrame(1, batchOf([record(1)]));
    const second = codec.encoder.encodeFrame(1, batchOf([record(2)]));
    expect(second.length).toBeLessThan(first.length - 'kind'.length - 'auction'.length);
    expect(codec.decoder.decode(first.subarray(4)).batch.values).toEqual([record(1)]);
    expect(codec.decoder.decode(second.subarray(4)).batch.values).toEqual([record(2)]);
    // A decoder that did not see the definition says so.
    expect(() => new RecordBatchDecoder(createStatePackr()).decode(second.subarray(4))).toThrow(/shape 0 was never defined/);
  });

  it('mixes shapes in any order, and objects of shapes beyond the limit still arrive', () => {
    const codec = pair();
    const random = seededRandom(77);
    const values = Array.from({ length: 5000 }, (_, i) => {
      const kind = Math.floor(random() * 4);
      if (kind === 0) return { kind: 'person', id: i, name: `p${i}` };
      if (kind === 1) return { kind: 'auction', id: i, seller: i % 7, reserve: random() };
      if (kind === 2) return { kind: 'bid', auction: i, price: random() * 100 };
      return { [`k${i % 50}`]: i };
    });
    expect(roundTrip(values, undefined, codec).values).toEqual(values);
    expect(roundTrip(values.slice(0, 100), undefined, codec).values).toEqual(values.slice(0, 100));
    // With room for 3 shapes, objects of the other 50 go through msgpackr and still arrive.
    const small = { encoder: new RecordBatchEncoder(createStatePackr(), 3), decoder: new RecordBatchDecoder(createStatePackr()) };
    const first = small.encoder.encodeFrame(1, batchOf(values));
    expect(small.decoder.decode(first.subarray(4)).batch.values).toEqual(values);
    expect(first.length).toBeGreaterThan(codec.encoder.encodeFrame(1, batchOf(values)).length);
    expect(() => new RecordBatchEncoder(createStatePackr(), MAX_SHAPES + 1)).toThrow(/shapes/);
  });

  it('writes dictionaries (a new shape per record) and objects with very many keys through msgpackr once past the limits', () => {
    const codec = pair();
    const dictionaries = Array.from({ length: DEFAULT_MAX_SHAPES + 500 }, (_, i) => ({ [`user-${i}`]: i }));
    const wide = Object.fromEntries(Array.from({ length: MAX_FIELDS + 1 }, (_, i) => [`f${i}`, i]));
    expect(roundTrip([...dictionaries, wide], undefined, codec).values).toEqual([...dictionaries, wide]);
    // Shapes defined before the limit still work in later frames.
    expect(roundTrip([{ 'user-3': 3 }, { 'user-2000': 1 }], undefined, codec).values).toEqual([{ 'user-3': 3 }, { 'user-2000': 1 }]);
  });

  it('forgets the shapes of a frame that failed to encode, so the next frame decodes', () => {
    const codec = pair();
    const ok = { a: 1, b: 'x' };
    expect(() => codec.encoder.encodeFrame(1, batchOf([ok, { c: Symbol('not data') }]))).toThrow(/record 1 of a batch .* holds a symbol/);
    expect(() => codec.encoder.encodeFrame(1, batchOf([{ d: 1, f: () => 1 }]))).toThrow(/record 0 of a batch .* holds a function.*create functions and symbols in the operator/);
    const frame = codec.encoder.encodeFrame(1, batchOf([ok, { c: 1 }]));
    expect(codec.decoder.decode(frame.subarray(4)).batch.values).toEqual([ok, { c: 1 }]);
  });

  it('refuses cut-off frames, and damaged ones fail with an error or decode, never crash or allocate without bound', () => {
    const codec = pair();
    const values = [{ kind: 'bid', auction: 1, url: 'https://example.com/' + 'x'.repeat(40) }, 'hello', [1, 2, 3], 1.5];
    const frame = codec.encoder.encodeFrame(1, batchOf(values)).subarray(4);
    codec.decoder.decode(frame); // defines the shape
    const seed = 424242;
    const random = seededRandom(seed);
    for (let cut = 1; cut < frame.length; cut++) {
      expect(() => new RecordBatchDecoder(createStatePackr()).decode(frame.subarray(0, cut)), `cut at ${cut}`).toThrow();
    }
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const damaged = Buffer.from(frame);
      damaged[1 + Math.floor(random() * (damaged.length - 1))] ^= 1 + Math.floor(random() * 255);
      try {
        new RecordBatchDecoder(createStatePackr()).decode(damaged);
      } catch (e) {
        refused++;
        expect(e instanceof RecordBatchDecodeError || e instanceof RangeError || e instanceof Error, `seed ${seed}`).toBe(true);
      }
    }
    expect(refused, `seed ${seed}`).toBeGreaterThan(0);
  });

  describe('string dictionary', () => {
    const decodeAll = (codec: ReturnType<typeof pair>, frames: Buffer[]): unknown[][] => frames.map((f) => codec.decoder.decode(f.subarray(4)).batch.values);

    it('writes a repeated string as an id after its first time, on any site', () => {
      const codec = pair();
      const record = (i: number) => ({ kind: 'bid', auction: i, url: 'https://www.nexmark.com/item.htm?query=1&channel_id=1234567', extra: 'x'.repeat(60) });
      const first = codec.encoder.encodeFrame(1, batchOf([record(1), 'the', ['quick', 'the']]));
      const second = codec.encoder.encodeFrame(1, batchOf([record(2), 'the', ['quick', 'the']]));
      const third = codec.encoder.encodeFrame(1, batchOf(['quick']));
      // Four strings of the record and two others become 3-byte ids.
      expect(second.length).toBeLessThan(first.length - 100);
      expect(decodeAll(codec, [first, second])).toEqual([
        [record(1), 'the', ['quick', 'the']],
        [record(2), 'the', ['quick', 'the']],
      ]);
      expect(codec.encoder.dictionarySize).toBe(5);
      // A decoder that did not see the definitions says so.
      expect(() => new RecordBatchDecoder(createStatePackr()).decode(third.subarray(4))).toThrow(/string 4 was never defined/);
    });

    it('writes the strings of a site whose values do not repeat plainly, without filling the dictionary', () => {
      const codec = pair();
      const values = Array.from({ length: 20_000 }, (_, i) => ({ id: `user-${i}-${i * 7919}`, country: ['DE', 'FR', 'US'][i % 3] }));
      const frames = [];
      for (let f = 0; f < 20; f++) frames.push(codec.encoder.encodeFrame(1, batchOf(values.slice(f * 1000, f * 1000 + 1000))));
      expect(decodeAll(codec, frames).flat()).toEqual(values);
      // The id site tried one window of 1,024 strings; the country site kept its 3.
      expect(codec.encoder.dictionarySize).toBe(1024 + 3);
      // Strings longer than the limit are never kept.
      const long = 'y'.repeat(DICTIONARY_MAX_STRING_CHARS + 1);
      const before = codec.encoder.dictionarySize;
      const a = codec.encoder.encodeFrame(1, batchOf([long, long]));
      expect(codec.encoder.dictionarySize).toBe(before);
      expect(decodeAll(codec, [a])).toEqual([[long, long]]);
    });

    it('stays in step with the reader through drifting values, a full dictionary and its resets (seeded)', () => {
      const seed = 20261201;
      const random = seededRandom(seed);
      const codec = pair();
      let resets = 0;
      const sent: unknown[][] = [];
      const frames: Buffer[] = [];
      // 300 frames of 1,000 records: half from a hot set that drifts every 50 frames, half
      // unique, so the site keeps using the dictionary and fills it.
      for (let f = 0; f < 300; f++) {
        const epoch = Math.floor(f / 50);
        const values = Array.from({ length: 1000 }, (_, i) => ({
          word: random() < 0.5 ? `hot-${epoch}-${Math.floor(random() * 100)}` : `once-${f}-${i}`,
          n: i,
          note: random() < 0.01 ? 'é ünïcode 日本' : 'plain',
        }));
        const before = codec.encoder.dictionarySize;
        frames.push(codec.encoder.encodeFrame(f, batchOf(values)));
        if (codec.encoder.dictionarySize < before) resets++;
        sent.push(values);
        expect(codec.encoder.dictionarySize, `seed ${seed}`).toBeLessThanOrEqual(DICTIONARY_MAX_ENTRIES);
      }
      // The dictionary is full from about frame 130, before the hot set of frame 150: it is
      // cleared, and the new hot words are ids again (3 bytes instead of ~10) within a frame.
      expect(resets, `seed ${seed}`).toBeGreaterThan(0);
      expect(frames[140]!.length, `seed ${seed}`).toBeGreaterThan(15_000);
      expect(Math.abs(frames[152]!.length - frames[140]!.length), `seed ${seed}`).toBeLessThan(1500);
      const received = decodeAll(codec, frames);
      for (let f = 0; f < sent.length; f++) expect(received[f], `frame ${f}, seed ${seed}`).toEqual(sent[f]);
    });

    it('takes back the strings of a frame that failed to encode, and a reset stays due until a frame carries it', () => {
      const codec = pair();
      const ok = codec.encoder.encodeFrame(1, batchOf(['kept']));
      expect(() => codec.encoder.encodeFrame(1, batchOf(['lost-1', { a: 'lost-2', f: () => 1 }]))).toThrow(/cannot be sent/);
      expect(codec.encoder.dictionarySize).toBe(1);
      const next = codec.encoder.encodeFrame(1, batchOf(['lost-1', 'lost-2', 'kept']));
      // The reader never saw the failed frame.
      expect(decodeAll(codec, [ok, next])).toEqual([['kept'], ['lost-1', 'lost-2', 'kept']]);

      // Fill the dictionary, then refuse strings until a reset is due; the frame that would
      // carry it fails, so the next one carries it instead.
      const full = pair();
      const frames: Buffer[] = [];
      const sent: unknown[][] = [];
      let i = 0;
      const send = (values: unknown[]) => {
        sent.push(values);
        frames.push(full.encoder.encodeFrame(1, batchOf(values)));
      };
      const frameOf = (n: number) => Array.from({ length: n }, () => (i++ % 2 === 0 ? 'hot' : `s${i}`));
      while (full.encoder.dictionarySize < DICTIONARY_MAX_ENTRIES) send(frameOf(4096));
      let refusingFrames = 0;
      for (;;) {
        expect(() => full.encoder.encodeFrame(1, batchOf([Symbol('x')]))).toThrow(/cannot be sent/);
        if (full.encoder.dictionarySize === 0) break;
        send(frameOf(4096));
        refusingFrames++;
      }
      // 2,048 strings refused a frame: due once as many as the dictionary holds were refused.
      expect(refusingFrames).toBeGreaterThan(10);
      expect(refusingFrames).toBeLessThanOrEqual(Math.ceil(DICTIONARY_MAX_ENTRIES / 2048) + 1);
      expect(full.encoder.dictionarySize).toBe(0);
      send(['hot', 'new-a', 'hot']);
      expect(full.encoder.dictionarySize).toBe(2);
      expect(decodeAll(full, frames)).toEqual(sent);
    });

    it('refuses a definition out of order or of something other than a string', () => {
      const codec = pair();
      const frame = Buffer.from(codec.encoder.encodeFrame(1, batchOf(['abc'])).subarray(4));
      // Layout: marker, channel, count, flags, then TAG_DICTIONARY_NEW, id u16, the string.
      const id = frame.subarray(11, 13);
      id.writeUInt16LE(1);
      expect(() => new RecordBatchDecoder(createStatePackr()).decode(frame)).toThrow(/string 1 defined where string 0 was expected/);
      id.writeUInt16LE(0);
      frame[13] = 4; // TAG_UINT8
      expect(() => new RecordBatchDecoder(createStatePackr()).decode(frame)).toThrow(/not a string/);
      frame[9] = 0x80;
      expect(() => new RecordBatchDecoder(createStatePackr()).decode(frame)).toThrow(/unknown flags/);
    });
  });
});
