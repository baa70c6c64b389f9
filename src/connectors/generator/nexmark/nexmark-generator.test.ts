import { describe, it, expect } from 'vitest';
import {
  FIRST_AUCTION_ID,
  FIRST_PERSON_ID,
  NexmarkConfigError,
  defaultNexmarkConfig,
  nexmarkEventAt,
  nexmarkEventKindAt,
  nexmarkTimestampAt,
  nexmarkWatermarkAt,
  resolveNexmarkConfig,
} from './index.js';
import type { Auction, Bid, NexmarkConfig, NexmarkEvent, Person, ResolvedNexmarkConfig } from './index.js';

const cfg = resolveNexmarkConfig();

function range(config: ResolvedNexmarkConfig, from: number, count: number): NexmarkEvent[] {
  const out: NexmarkEvent[] = [];
  for (let i = from; i < from + count; i++) out.push(nexmarkEventAt(i, config));
  return out;
}

describe('resolveNexmarkConfig', () => {
  it('fills in the Nexmark defaults and derives the inter-event delay', () => {
    expect(cfg.personProportion).toBe(1);
    expect(cfg.auctionProportion).toBe(3);
    expect(cfg.bidProportion).toBe(46);
    expect(cfg.totalProportion).toBe(50);
    expect(cfg.hotAuctionRatio).toBe(2);
    expect(cfg.hotSellersRatio).toBe(4);
    expect(cfg.hotBiddersRatio).toBe(4);
    expect(cfg.numActivePeople).toBe(1000);
    expect(cfg.numInFlightAuctions).toBe(100);
    expect(cfg.avgPersonByteSize).toBe(200);
    expect(cfg.avgAuctionByteSize).toBe(500);
    expect(cfg.avgBidByteSize).toBe(100);
    expect(cfg.firstEventRate).toBe(10_000_000);
    expect(cfg.interEventDelayUs).toBeCloseTo(0.1, 12);
    expect(cfg.baseTimeMs).toBe(defaultNexmarkConfig.baseTimeMs);
    expect(cfg.maxEvents).toBe(Number.POSITIVE_INFINITY);
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it('applies overrides, ignores undefined and is idempotent', () => {
    const c = resolveNexmarkConfig({ firstEventRate: 1000, numEventGenerators: 4, maxEvents: 123, seed: undefined });
    expect(c.interEventDelayUs).toBe(4000);
    expect(c.maxEvents).toBe(123);
    expect(c.seed).toBe(0);
    expect(resolveNexmarkConfig(c)).toEqual(c);
  });

  const bad: [string, Partial<NexmarkConfig> | Record<string, unknown>, RegExp][] = [
    ['negative proportion', { bidProportion: -1 }, /bidProportion/],
    ['fractional proportion', { auctionProportion: 1.5 }, /auctionProportion/],
    ['all proportions zero', { personProportion: 0, auctionProportion: 0, bidProportion: 0 }, /must be >= 1/],
    ['auctions without persons', { personProportion: 0 }, /personProportion/],
    ['bids without auctions', { auctionProportion: 0 }, /auctionProportion/],
    ['zero rate', { firstEventRate: 0 }, /firstEventRate/],
    ['negative rate', { firstEventRate: -5 }, /firstEventRate/],
    ['NaN rate', { firstEventRate: Number.NaN }, /firstEventRate/],
    ['infinite rate', { firstEventRate: Number.POSITIVE_INFINITY }, /firstEventRate/],
    ['string rate', { firstEventRate: '100' as unknown as number }, /firstEventRate/],
    ['zero generators', { numEventGenerators: 0 }, /numEventGenerators/],
    ['zero hot ratio', { hotAuctionRatio: 0 }, /hotAuctionRatio/],
    ['zero hot sellers ratio', { hotSellersRatio: 0 }, /hotSellersRatio/],
    ['negative hot bidders ratio', { hotBiddersRatio: -4 }, /hotBiddersRatio/],
    ['no active people', { numActivePeople: 0 }, /numActivePeople/],
    ['negative in-flight auctions', { numInFlightAuctions: -1 }, /numInFlightAuctions/],
    ['negative byte size', { avgBidByteSize: -1 }, /avgBidByteSize/],
    ['huge byte size', { avgAuctionByteSize: 1 << 30 }, /avgAuctionByteSize/],
    ['zero group size', { outOfOrderGroupSize: 0 }, /outOfOrderGroupSize/],
    ['fractional base time', { baseTimeMs: 1.5 }, /baseTimeMs/],
    ['negative first event id', { firstEventId: -1 }, /firstEventId/],
    ['negative max events', { maxEvents: -1 }, /maxEvents/],
    ['unknown key', { firstEventRat: 5 }, /unknown option 'firstEventRat'/],
  ];
  for (const [what, partial, message] of bad) {
    it(`rejects ${what}`, () => {
      expect(() => resolveNexmarkConfig(partial as Partial<NexmarkConfig>)).toThrow(NexmarkConfigError);
      expect(() => resolveNexmarkConfig(partial as Partial<NexmarkConfig>)).toThrow(message);
    });
  }

  it('accepts a persons-only stream', () => {
    const c = resolveNexmarkConfig({ auctionProportion: 0, bidProportion: 0 });
    expect(range(c, 0, 20).every((e) => e.kind === 'person')).toBe(true);
  });
});

describe('nexmarkEventAt determinism', () => {
  it('returns equal events for the same number, whatever the call order', () => {
    const n = 3000;
    const forward = range(cfg, 0, n);
    const backward: NexmarkEvent[] = new Array<NexmarkEvent>(n);
    for (let i = n - 1; i >= 0; i--) backward[i] = nexmarkEventAt(i, cfg);
    expect(backward).toEqual(forward);

    // Shuffled order, interleaved with calls for another config.
    const other = resolveNexmarkConfig({ seed: 7, avgBidByteSize: 300 });
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = (i * 7919 + 13) % (i + 1);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (const i of order) {
      nexmarkEventAt(i, other);
      expect(nexmarkEventAt(i, cfg)).toEqual(forward[i]);
    }
  });

  it('depends on the config values, not the config object', () => {
    const again = resolveNexmarkConfig({});
    const cloned = structuredClone(cfg);
    for (const i of [0, 1, 4, 49, 50, 12345, 9_999_999]) {
      expect(nexmarkEventAt(i, again)).toEqual(nexmarkEventAt(i, cfg));
      expect(nexmarkEventAt(i, cloned)).toEqual(nexmarkEventAt(i, cfg));
    }
  });

  it('gives different content for a different seed but the same kinds and times', () => {
    const seeded = resolveNexmarkConfig({ seed: 42 });
    const a = range(cfg, 0, 500);
    const b = range(seeded, 0, 500);
    expect(b.map((e) => e.kind)).toEqual(a.map((e) => e.kind));
    expect(b.map((e) => e.dateTime)).toEqual(a.map((e) => e.dateTime));
    expect(b).not.toEqual(a);
  });

  it('produces distinct-looking events (randomness is not stuck)', () => {
    const bids = range(cfg, 0, 5000).filter((e): e is Bid => e.kind === 'bid');
    expect(new Set(bids.map((b) => b.price)).size).toBeGreaterThan(bids.length * 0.9);
    expect(new Set(bids.map((b) => b.extra)).size).toBeGreaterThan(200);
  });

  it('rejects invalid event numbers', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      expect(() => nexmarkEventAt(bad, cfg)).toThrow(RangeError);
      expect(() => nexmarkTimestampAt(bad, cfg)).toThrow(RangeError);
    }
  });
});

describe('event kinds', () => {
  it('follows the 1:3:46 proportions exactly', () => {
    const counts = { person: 0, auction: 0, bid: 0 };
    const wrong: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      const e = nexmarkEventAt(i, cfg);
      counts[e.kind]++;
      const offset = i % 50;
      const expected = offset === 0 ? 'person' : offset < 4 ? 'auction' : 'bid';
      if (e.kind !== expected || nexmarkEventKindAt(i, cfg) !== expected) wrong.push(i);
    }
    expect(wrong).toEqual([]);
    expect(counts).toEqual({ person: 1000, auction: 3000, bid: 46_000 });
  });

  it('honours custom proportions and firstEventId', () => {
    const c = resolveNexmarkConfig({ personProportion: 2, auctionProportion: 3, bidProportion: 5 });
    const counts = { person: 0, auction: 0, bid: 0 };
    for (const e of range(c, 0, 10_000)) counts[e.kind]++;
    expect(counts).toEqual({ person: 2000, auction: 3000, bid: 5000 });

    const shifted = resolveNexmarkConfig({ firstEventId: 1 });
    expect(nexmarkEventAt(0, shifted).kind).toBe('auction');
    expect(nexmarkEventAt(49, shifted).kind).toBe('person');
    expect((nexmarkEventAt(49, shifted) as Person).id).toBe(FIRST_PERSON_ID + 1);
  });
});

interface IdStats {
  bids: number;
  hotAuctionBids: number;
  hotBidderBids: number;
  bidsWithKnownAuction: number;
  bidsWithKnownBidder: number;
  auctions: number;
  hotSellerAuctions: number;
  auctionsWithKnownSeller: number;
}

/** Walks events in order and checks every id against what was generated before. */
function checkIds(config: ResolvedNexmarkConfig, count: number): IdStats {
  const stats: IdStats = {
    bids: 0,
    hotAuctionBids: 0,
    hotBidderBids: 0,
    bidsWithKnownAuction: 0,
    bidsWithKnownBidder: 0,
    auctions: 0,
    hotSellerAuctions: 0,
    auctionsWithKnownSeller: 0,
  };
  const violations: string[] = [];
  const fail = (i: number, what: string, e: NexmarkEvent): void => {
    if (violations.length < 10) violations.push(`event ${i}: ${what}: ${JSON.stringify(e)}`);
  };
  let lastPerson = FIRST_PERSON_ID - 1; // highest person id generated so far
  let lastAuction = FIRST_AUCTION_ID - 1;
  const lead = 10;
  for (let i = 0; i < count; i++) {
    const e = nexmarkEventAt(i, config);
    const minPerson = Math.max(FIRST_PERSON_ID, lastPerson - config.numActivePeople);
    if (e.kind === 'person') {
      if (e.id !== lastPerson + 1) fail(i, 'person id not sequential', e);
      lastPerson = e.id;
    } else if (e.kind === 'auction') {
      if (e.id !== lastAuction + 1) fail(i, 'auction id not sequential', e);
      lastAuction = e.id;
      stats.auctions++;
      if (e.seller < minPerson || e.seller > lastPerson + lead) fail(i, 'seller out of window', e);
      if (e.seller <= lastPerson) stats.auctionsWithKnownSeller++;
      if (e.seller - FIRST_PERSON_ID === Math.floor((lastPerson - FIRST_PERSON_ID) / 100) * 100) {
        stats.hotSellerAuctions++;
      }
    } else {
      stats.bids++;
      const minAuction = Math.max(FIRST_AUCTION_ID, lastAuction - config.numInFlightAuctions);
      if (e.auction < minAuction || e.auction > lastAuction + lead) fail(i, 'auction out of window', e);
      if (e.bidder < minPerson || e.bidder > lastPerson + lead) fail(i, 'bidder out of window', e);
      if (e.auction <= lastAuction) stats.bidsWithKnownAuction++;
      if (e.bidder <= lastPerson) stats.bidsWithKnownBidder++;
      if (e.auction - FIRST_AUCTION_ID === Math.floor((lastAuction - FIRST_AUCTION_ID) / 100) * 100) {
        stats.hotAuctionBids++;
      }
      if (e.bidder - FIRST_PERSON_ID === Math.floor((lastPerson - FIRST_PERSON_ID) / 100) * 100 + 1) {
        stats.hotBidderBids++;
      }
    }
  }
  expect(violations).toEqual([]);
  return stats;
}

describe('ids', () => {
  it('references persons and auctions generated before (or a few ids ahead, as in Nexmark)', () => {
    const s = checkIds(cfg, 200_000);
    expect(s.bids).toBe(184_000);
    expect(s.bidsWithKnownAuction / s.bids).toBeGreaterThan(0.93);
    expect(s.bidsWithKnownBidder / s.bids).toBeGreaterThan(0.98);
    expect(s.auctionsWithKnownSeller / s.auctions).toBeGreaterThan(0.98);
    // P(hot) = 1 - 1/ratio, plus the small chance that a random pick hits the hot id.
    expect(s.hotAuctionBids / s.bids).toBeGreaterThan(0.49);
    expect(s.hotAuctionBids / s.bids).toBeLessThan(0.52);
    expect(s.hotBidderBids / s.bids).toBeGreaterThan(0.74);
    expect(s.hotBidderBids / s.bids).toBeLessThan(0.76);
    expect(s.hotSellerAuctions / s.auctions).toBeGreaterThan(0.72);
    expect(s.hotSellerAuctions / s.auctions).toBeLessThan(0.78);
  });

  it('has no hot items when the ratios are 1, and tracks small windows', () => {
    const c = resolveNexmarkConfig({
      hotAuctionRatio: 1,
      hotBiddersRatio: 1,
      hotSellersRatio: 1,
      numActivePeople: 50,
      numInFlightAuctions: 20,
    });
    const s = checkIds(c, 100_000);
    expect(s.hotAuctionBids / s.bids).toBeLessThan(0.1);
    expect(s.hotBidderBids / s.bids).toBeLessThan(0.05);
    expect(s.hotSellerAuctions / s.auctions).toBeLessThan(0.05);
  });

  it('keeps the id arithmetic at large event numbers', () => {
    const n = 50 * 2 ** 35; // beyond 2^32 event ids
    const p = nexmarkEventAt(n, cfg) as Person;
    expect(p.kind).toBe('person');
    expect(p.id).toBe(FIRST_PERSON_ID + 2 ** 35);
    const a = nexmarkEventAt(n + 3, cfg) as Auction;
    expect(a.id).toBe(FIRST_AUCTION_ID + 3 * 2 ** 35 + 2);
    const b = nexmarkEventAt(n + 4, cfg) as Bid;
    expect(b.auction).toBeLessThanOrEqual(a.id + 10);
    expect(b.auction).toBeGreaterThanOrEqual(a.id - 100);
    expect(b.bidder).toBeLessThanOrEqual(p.id + 10);
    expect(b.bidder).toBeGreaterThanOrEqual(p.id - 1000);
  });
});

describe('timestamps', () => {
  it('are non-decreasing, equal dateTime and follow the rate', () => {
    let prev = -Infinity;
    const wrong: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      const t = nexmarkTimestampAt(i, cfg);
      if (t < prev || nexmarkEventAt(i, cfg).dateTime !== t) wrong.push(i);
      prev = t;
    }
    expect(wrong).toEqual([]);
    // 10M events/s: 10,000 events per millisecond.
    expect(nexmarkTimestampAt(0, cfg)).toBe(cfg.baseTimeMs);
    expect(nexmarkTimestampAt(9_999, cfg)).toBe(cfg.baseTimeMs);
    expect(nexmarkTimestampAt(10_000, cfg)).toBe(cfg.baseTimeMs + 1);
    expect(nexmarkTimestampAt(10_000_000, cfg)).toBe(cfg.baseTimeMs + 1000);
    expect(nexmarkWatermarkAt(12_345, cfg)).toBe(nexmarkTimestampAt(12_345, cfg));
  });

  it('uses the Java timestampForEvent arithmetic', () => {
    const slow = resolveNexmarkConfig({ firstEventRate: 1000, baseTimeMs: 0 });
    expect(nexmarkTimestampAt(1234, slow)).toBe(1234);
    const split = resolveNexmarkConfig({ firstEventRate: 1000, numEventGenerators: 4, baseTimeMs: 0 });
    expect(nexmarkTimestampAt(1234, split)).toBe(4936);
    const odd = resolveNexmarkConfig({ firstEventRate: 3, baseTimeMs: 5 });
    expect(nexmarkTimestampAt(1, odd)).toBe(5 + 333);
    expect(nexmarkTimestampAt(3, odd)).toBe(5 + Math.floor(Math.floor(3 * (1e6 / 3)) / 1000));
  });

  it('lets auctions expire after about the time numInFlightAuctions auctions take', () => {
    const c = resolveNexmarkConfig({ firstEventRate: 10_000 }); // 100us per event
    // numEventsForAuctions = 100 * 50 / 3 = 1666 events = ~166ms; expiry uniform in [1, 2 * horizon].
    let sum = 0;
    let count = 0;
    let minLength = Infinity;
    let maxLength = 0;
    for (let i = 0; i < 100_000; i++) {
      const e = nexmarkEventAt(i, c);
      if (e.kind !== 'auction') continue;
      const length = e.expires - e.dateTime;
      minLength = Math.min(minLength, length);
      maxLength = Math.max(maxLength, length);
      sum += length;
      count++;
    }
    expect(minLength).toBeGreaterThanOrEqual(1);
    expect(maxLength).toBeLessThanOrEqual(2 * 167);
    expect(sum / count).toBeGreaterThan(155);
    expect(sum / count).toBeLessThan(180);
    // At the default 10M events/s the horizon is below a millisecond (as in Java).
    const a = nexmarkEventAt(1, cfg) as Auction;
    expect(a.expires - a.dateTime).toBeGreaterThanOrEqual(1);
    expect(a.expires - a.dateTime).toBeLessThanOrEqual(2);
  });

  it('shuffles within groups when outOfOrderGroupSize > 1, with a valid watermark', () => {
    const c = resolveNexmarkConfig({ outOfOrderGroupSize: 10, firstEventRate: 1000 });
    const events = range(c, 0, 10_000);
    const kinds = { person: 0, auction: 0, bid: 0 };
    for (const e of events) kinds[e.kind]++;
    expect(kinds).toEqual({ person: 200, auction: 600, bid: 9200 });
    let minFuture = Infinity;
    const wrong: number[] = [];
    for (let i = events.length - 1; i >= 0; i--) {
      minFuture = Math.min(minFuture, events[i]!.dateTime);
      if (nexmarkWatermarkAt(i, c) > minFuture) wrong.push(i);
    }
    expect(wrong).toEqual([]);
    expect(events.some((e, i) => i > 0 && e.dateTime < events[i - 1]!.dateTime)).toBe(true);
  });
});

describe('event content', () => {
  const events = range(cfg, 0, 100_000);
  const persons = events.filter((e): e is Person => e.kind === 'person');
  const auctions = events.filter((e): e is Auction => e.kind === 'auction');
  const bids = events.filter((e): e is Bid => e.kind === 'bid');

  it('creates each kind with a fixed property order', () => {
    expect(Object.keys(persons[0]!)).toEqual([
      'kind', 'id', 'name', 'emailAddress', 'creditCard', 'city', 'state', 'dateTime', 'extra',
    ]);
    expect(Object.keys(auctions[0]!)).toEqual([
      'kind', 'id', 'itemName', 'description', 'initialBid', 'reserve', 'dateTime', 'expires', 'seller', 'category', 'extra',
    ]);
    expect(Object.keys(bids[0]!)).toEqual(['kind', 'auction', 'bidder', 'price', 'channel', 'url', 'dateTime', 'extra']);
  });

  it('fills persons like the Java PersonGenerator', () => {
    const states = new Set(['AZ', 'CA', 'ID', 'OR', 'WA', 'WY']);
    const bad = persons.filter(
      (p) =>
        !/^[A-Z][a-z]+ [A-Z][a-z]+$/.test(p.name) ||
        !/^[a-z ]*@[a-z ]*\.com$/.test(p.emailAddress) ||
        !/^\d{4} \d{4} \d{4} \d{4}$/.test(p.creditCard) ||
        !states.has(p.state),
    );
    expect(bad).toEqual([]);
    expect(new Set(persons.map((p) => p.city)).size).toBe(10);
    expect(new Set(persons.map((p) => p.state)).size).toBe(6);
  });

  it('fills auctions and bids like the Java generators', () => {
    const badAuctions = auctions.filter(
      (a) =>
        a.category < 10 ||
        a.category > 14 ||
        a.initialBid < 100 ||
        a.initialBid > 100_000_000 ||
        a.reserve < a.initialBid ||
        a.itemName.length >= 20 ||
        a.description.length >= 100,
    );
    expect(badAuctions).toEqual([]);
    expect(new Set(auctions.map((a) => a.category)).size).toBe(5);
    const prices = bids.map((b) => b.price).sort((x, y) => x - y);
    expect(prices[0]).toBeGreaterThanOrEqual(100);
    expect(prices[prices.length - 1]).toBeLessThanOrEqual(100_000_000);
    // log-uniform over 10^2..10^8 cents: median 10^5.
    const median = prices[prices.length >> 1]!;
    expect(median).toBeGreaterThan(80_000);
    expect(median).toBeLessThan(125_000);
    const hot = new Set(['Google', 'Facebook', 'Baidu', 'Apple']);
    const hotShare = bids.filter((b) => hot.has(b.channel)).length / bids.length;
    expect(hotShare).toBeGreaterThan(0.48);
    expect(hotShare).toBeLessThan(0.52);
    const urlPattern = /^https:\/\/www\.nexmark\.com\/[a-z_]+\/[a-z_]+\/[a-z_]+\/item\.htm\?query=1(&channel_id=-?\d+)?$/;
    const badBids = bids.filter((b) => !(hot.has(b.channel) || /^channel-\d+$/.test(b.channel)) || !urlPattern.test(b.url));
    expect(badBids).toEqual([]);
    // A channel always maps to the same url.
    const urlOf = new Map<string, string>();
    const inconsistent: Bid[] = [];
    for (const b of bids) {
      const known = urlOf.get(b.channel);
      if (known === undefined) urlOf.set(b.channel, b.url);
      else if (known !== b.url) inconsistent.push(b);
    }
    expect(inconsistent).toEqual([]);
  });

  it('pads extra to the configured average sizes', () => {
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    const personSize = mean(
      persons.map((p) => 8 + p.name.length + p.emailAddress.length + p.creditCard.length + p.city.length + p.state.length + p.extra.length),
    );
    const auctionSize = mean(auctions.map((a) => 48 + a.itemName.length + a.description.length + a.extra.length));
    const bidSize = mean(bids.map((b) => 32 + b.extra.length));
    expect(Math.abs(personSize - 200)).toBeLessThan(4);
    expect(Math.abs(auctionSize - 500)).toBeLessThan(5);
    expect(Math.abs(bidSize - 100)).toBeLessThan(1);
    // Java: 68 +- round(0.2 * 68) = [54, 54 + 2 * 14).
    const badExtra = bids.filter((b) => !/^[a-z]+$/.test(b.extra) || b.extra.length < 54 || b.extra.length > 81);
    expect(badExtra).toEqual([]);
    const lengths = new Set(bids.map((b) => b.extra.length));
    expect(lengths.size).toBe(28);

    const small = resolveNexmarkConfig({ avgBidByteSize: 20, avgPersonByteSize: 0, avgAuctionByteSize: 2000 });
    const ev = range(small, 0, 2000);
    expect(ev.every((e) => e.kind === 'auction' || e.extra === '')).toBe(true);
    const big = ev.filter((e): e is Auction => e.kind === 'auction');
    expect(Math.abs(mean(big.map((a) => 48 + a.itemName.length + a.description.length + a.extra.length)) - 2000)).toBeLessThan(40);

    // Large paddings come from a table of slices instead of copies; sizes must still match.
    const huge = resolveNexmarkConfig({ avgBidByteSize: 60_000 });
    const hugeBids = range(huge, 0, 3000).filter((e): e is Bid => e.kind === 'bid');
    expect(Math.abs(mean(hugeBids.map((b) => 32 + b.extra.length)) - 60_000)).toBeLessThan(1000);
    expect(hugeBids.every((b) => /^[a-z]+$/.test(b.extra))).toBe(true);
    expect(nexmarkEventAt(1234, huge)).toEqual(nexmarkEventAt(1234, resolveNexmarkConfig({ avgBidByteSize: 60_000 })));
  });
});
