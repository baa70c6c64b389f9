import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../testing/seeded-random.js';
import type { OutputChannel } from './channel.js';
import { assignToKeyGroup } from '../state/key-group.js';
import { channelSelector, type ChannelSelector } from './partitioner.js';
import { OutputAvailability, RecordWriter } from './record-writer.js';
import { NO_TIMESTAMP, type ChannelElement } from './stream-element.js';

class CollectingChannel implements OutputChannel {
  readonly elements: ChannelElement[] = [];
  push(element: ChannelElement): void {
    this.elements.push(element);
  }
  pushPriority(): ChannelElement[] {
    return [];
  }
  isFull(): boolean {
    return false;
  }
  onWritable(): void {}
}

describe('RecordWriter', () => {
  it('batches carry exactly the records written, in order, whether flushed full or part-full (seeded)', () => {
    const seed = 17;
    const random = seededRandom(seed);
    const channels = [new CollectingChannel(), new CollectingChannel(), new CollectingChannel()];
    let next = 0;
    const selector: ChannelSelector = { select: () => next };
    const batchSize = 8;
    const writer = new RecordWriter(channels, selector, batchSize, new OutputAvailability());
    const expected: { value: number; ts: number }[][] = channels.map(() => []);
    for (let i = 0; i < 5_000; i++) {
      next = Math.floor(random() * channels.length);
      const ts = random() < 0.5 ? NO_TIMESTAMP : i;
      writer.emit(i, ts);
      expected[next]!.push({ value: i, ts });
      // Part-full flushes of varying sizes (a task's slice ends), now and then a burst to one channel.
      if (random() < 0.05) writer.flushAll();
    }
    writer.flushAll();
    channels.forEach((channel, c) => {
      const got: { value: number; ts: number }[] = [];
      for (const e of channel.elements) {
        if (e.kind !== 'batch') throw new Error(`seed ${seed}: unexpected ${e.kind}`);
        expect(e.values.length, `seed ${seed}`).toBeGreaterThan(0);
        expect(e.values.length).toBeLessThanOrEqual(batchSize);
        expect(e.timestamps.length).toBe(e.values.length);
        for (let i = 0; i < e.values.length; i++) {
          // No holes left in a presized batch.
          expect(i in e.values && i in e.timestamps, `seed ${seed}: hole at ${i}`).toBe(true);
          got.push({ value: e.values[i] as number, ts: e.timestamps[i]! });
        }
      }
      expect(got, `seed ${seed}: channel ${c}`).toEqual(expected[c]);
    });
  });

  it("a keyBy's batches carry each record's key group, the one that chose its channel; other batches carry none", () => {
    const channels = [new CollectingChannel(), new CollectingChannel()];
    const keyOf = (w: string) => w.slice(0, 3);
    const writer = new RecordWriter(channels, channelSelector({ kind: 'hash', keySelector: keyOf as (v: never) => string }, 2, 0, 128), 4, new OutputAvailability());
    const words = Array.from({ length: 50 }, (_, i) => `w${i % 17}x${i}`);
    for (const w of words) writer.emit(w, NO_TIMESTAMP);
    writer.flushAll();
    let seen = 0;
    channels.forEach((channel, c) => {
      for (const e of channel.elements) {
        if (e.kind !== 'batch') throw new Error(`unexpected ${e.kind}`);
        expect(e.keyGroups).toHaveLength(e.values.length);
        e.values.forEach((w, i) => {
          const kg = assignToKeyGroup(keyOf(w as string), 128);
          expect(e.keyGroups![i], `${w as string}`).toBe(kg);
          expect(kg < 64 ? 0 : 1).toBe(c);
          seen++;
        });
      }
    });
    expect(seen).toBe(words.length);
    const plain = [new CollectingChannel()];
    const rebalance = new RecordWriter(plain, channelSelector({ kind: 'rebalance' }, 1, 0, 128), 4, new OutputAvailability());
    rebalance.emit('a', NO_TIMESTAMP);
    rebalance.flushAll();
    expect(plain[0]!.elements[0]).toEqual({ kind: 'batch', values: ['a'], timestamps: [NO_TIMESTAMP], keyGroups: undefined });
  });
});
