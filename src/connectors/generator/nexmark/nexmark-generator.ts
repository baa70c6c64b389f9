/**
 * Deterministic Nexmark event generator.
 *
 * A TypeScript re-implementation of the Nexmark benchmark generator (nexmark/nexmark,
 * `nexmark-flink` `GeneratorConfig`, `NexmarkGenerator`, `PersonGenerator`, `AuctionGenerator`,
 * `BidGenerator`, `PriceGenerator`, `StringsGenerator`). Event kinds, id arithmetic (active people,
 * in-flight auctions, hot sellers / bidders / auctions, id leads), prices, auction expiry,
 * channels / urls and timestamps follow the Java code. Randomness differs: every event draws from
 * its own counter-based stream seeded by its event id, so {@link nexmarkEventAt} is a pure
 * function of the event number and can be called in any order, from any worker.
 *
 * Hot path: no per-event string building. Strings come from pools precomputed once (names, emails,
 * credit cards, item names, descriptions, channels, urls) and `extra` paddings come from per-config
 * tables holding several variants for every length the Java size formula can produce. Each call
 * allocates exactly one object (plus the boxed `dateTime` / `expires` doubles V8 needs).
 */

import { Buffer } from 'node:buffer';
import type { ResolvedNexmarkConfig } from './nexmark-config.js';
import { NexmarkConfigError, resolveNexmarkConfig } from './nexmark-config.js';
import type { Auction, Bid, NexmarkEvent, NexmarkEventKind, Person } from './nexmark-model.js';
import { FIRST_AUCTION_ID, FIRST_CATEGORY_ID, FIRST_PERSON_ID, NUM_CATEGORIES } from './nexmark-model.js';

// ---------------------------------------------------------------------------------------------
// Constants from the Java generator.

/** Number of yet-to-be-created people / auctions a random pick may reference. */
const PERSON_ID_LEAD = 10;
const AUCTION_ID_LEAD = 10;
/** Hot sellers / bidders / auctions are the first ones of each batch of this many. */
const HOT_SELLER_RATIO = 100;
const HOT_AUCTION_RATIO = 100;
const HOT_BIDDER_RATIO = 100;
const CHANNELS_NUMBER = 10_000;
const HOT_CHANNELS: readonly string[] = ['Google', 'Facebook', 'Baidu', 'Apple'];
const US_STATES: readonly string[] = 'AZ,CA,ID,OR,WA,WY'.split(',');
const US_CITIES: readonly string[] =
  'Phoenix,Los Angeles,San Francisco,Boise,Portland,Bend,Redmond,Seattle,Kent,Cheyenne'.split(',');
const FIRST_NAMES: readonly string[] = 'Peter,Paul,Luke,John,Saul,Vicky,Kate,Julie,Sarah,Deiter,Walter'.split(',');
const LAST_NAMES: readonly string[] = 'Shultz,Abrams,Spencer,White,Bartels,Walton,Smith,Jones,Noris'.split(',');
/** Java StringsGenerator.MIN_STRING_LENGTH. */
const MIN_STRING_LENGTH = 3;
/** Fixed part of the Java size estimates ("currentSize") of each event kind. */
const PERSON_FIXED_SIZE = 8;
const AUCTION_FIXED_SIZE = 8 + 8 + 8 + 8 + 8 + 8;
const BID_FIXED_SIZE = 8 + 8 + 8 + 8;

// ---------------------------------------------------------------------------------------------
// Pools (shared by all configs, built once on first use from a fixed seed).

/** Pools of random strings hold 2^POOL_BITS entries. */
const POOL_BITS = 13;
const POOL_SIZE = 1 << POOL_BITS;
const POOL_MASK = POOL_SIZE - 1;

// ---------------------------------------------------------------------------------------------
// Random numbers: a counter-based splitmix-style stream. State `s` advances by GAMMA, each output
// is a strong 32-bit integer hash (lowbias32) of the state.

const GAMMA = 0x9e3779b9 | 0;
const INV_2_32 = 1 / 4294967296;

function hash32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Uniform integer in [0, n) from a uint32 `r` (multiply-high; exact for n < 2^53). */
function below(r: number, n: number): number {
  return Math.floor(r * INV_2_32 * n);
}

/**
 * Java PriceGenerator.nextPrice: round(10^(6u) * 100), u uniform in [0, 1), with u = r / 2^32.
 * Math.pow is slow in V8, so 100 * 10^(6u) is assembled from three small tables indexed by
 * 11 + 11 + 10 bits of r (relative error a few ulps, i.e. a price may differ by one cent from
 * the Math.pow result in rare ties).
 */
const PRICE_HI = new Float64Array(2048);
const PRICE_MID = new Float64Array(2048);
const PRICE_LO = new Float64Array(1024);
for (let i = 0; i < 2048; i++) {
  PRICE_HI[i] = 100.0 * Math.pow(10.0, (6.0 * i) / 2048);
  PRICE_MID[i] = Math.pow(10.0, (6.0 * i) / (2048 * 2048));
}
for (let i = 0; i < 1024; i++) PRICE_LO[i] = Math.pow(10.0, (6.0 * i) / 4294967296);

function priceOf(r: number): number {
  return Math.round(PRICE_HI[r >>> 21]! * PRICE_MID[(r >>> 10) & 2047]! * PRICE_LO[r & 1023]!);
}

/** Sequential generator used only to build pools and tables. */
class PoolRandom {
  private s: number;
  constructor(seed: number) {
    this.s = hash32(seed ^ 0x5bd1e995) | 0;
  }
  next(): number {
    this.s = (this.s + GAMMA) | 0;
    return hash32(this.s);
  }
  nextInt(n: number): number {
    return below(this.next(), n);
  }
}

/** Java StringsGenerator.nextString: 3..maxLength-1 chars, 1/13 of them `special`, trimmed. */
function randomString(rng: PoolRandom, maxLength: number, special = ' '): string {
  let len = MIN_STRING_LENGTH + rng.nextInt(maxLength - MIN_STRING_LENGTH);
  let out = '';
  while (len-- > 0) {
    out += rng.nextInt(13) === 0 ? special : String.fromCharCode(97 + rng.nextInt(26));
  }
  return out.trim();
}

/** Java BidGenerator.getBaseUrl. */
function baseUrl(rng: PoolRandom): string {
  return (
    'https://www.nexmark.com/' +
    randomString(rng, 5, '_') + '/' +
    randomString(rng, 5, '_') + '/' +
    randomString(rng, 5, '_') + '/' +
    'item.htm?query=1'
  );
}

/** Java Integer.reverse. */
function reverseBits32(i: number): number {
  i = ((i & 0x55555555) << 1) | ((i >>> 1) & 0x55555555);
  i = ((i & 0x33333333) << 2) | ((i >>> 2) & 0x33333333);
  i = ((i & 0x0f0f0f0f) << 4) | ((i >>> 4) & 0x0f0f0f0f);
  return ((i << 24) | ((i & 0xff00) << 8) | ((i >>> 8) & 0xff00) | (i >>> 24)) | 0;
}

/** Java Math.abs(int): note abs(Integer.MIN_VALUE) stays negative. */
function javaIntAbs(i: number): number {
  return i < 0 && i !== -2147483648 ? -i : i;
}

interface Pools {
  /** All FIRST_NAMES x LAST_NAMES combinations. */
  readonly names: readonly string[];
  readonly emails: readonly string[];
  readonly creditCards: readonly string[];
  readonly itemNames: readonly string[];
  readonly descriptions: readonly string[];
  readonly hotUrls: readonly string[];
  readonly channelNames: readonly string[];
  readonly channelUrls: readonly string[];
  /** Range of the Java size estimate of a person / auction, over all pool combinations. */
  readonly personSizeMin: number;
  readonly personSizeMax: number;
  readonly auctionSizeMin: number;
  readonly auctionSizeMax: number;
}

function minMaxLength(strings: readonly string[]): [number, number] {
  let min = Infinity;
  let max = 0;
  for (const s of strings) {
    if (s.length < min) min = s.length;
    if (s.length > max) max = s.length;
  }
  return [min, max];
}

let pools: Pools | undefined;

function getPools(): Pools {
  if (pools !== undefined) return pools;
  const rng = new PoolRandom(0x4e584d4b); // "NXMK"

  const names: string[] = [];
  for (const first of FIRST_NAMES) for (const last of LAST_NAMES) names.push(`${first} ${last}`);

  const emails: string[] = new Array<string>(POOL_SIZE);
  const creditCards: string[] = new Array<string>(POOL_SIZE);
  const itemNames: string[] = new Array<string>(POOL_SIZE);
  const descriptions: string[] = new Array<string>(POOL_SIZE);
  for (let i = 0; i < POOL_SIZE; i++) {
    emails[i] = `${randomString(rng, 7)}@${randomString(rng, 5)}.com`;
    const groups: string[] = [];
    for (let g = 0; g < 4; g++) groups.push(String(rng.nextInt(10000)).padStart(4, '0'));
    creditCards[i] = groups.join(' ');
    itemNames[i] = randomString(rng, 20);
    descriptions[i] = randomString(rng, 100);
  }

  const hotUrls = HOT_CHANNELS.map(() => baseUrl(rng));
  const channelNames: string[] = new Array<string>(CHANNELS_NUMBER);
  const channelUrls: string[] = new Array<string>(CHANNELS_NUMBER);
  for (let i = 0; i < CHANNELS_NUMBER; i++) {
    let url = baseUrl(rng);
    if (rng.nextInt(10) > 0) url = `${url}&channel_id=${javaIntAbs(reverseBits32(i))}`;
    channelNames[i] = `channel-${i}`;
    channelUrls[i] = url;
  }

  const [nameMin, nameMax] = minMaxLength(names);
  const [emailMin, emailMax] = minMaxLength(emails);
  const [ccMin, ccMax] = minMaxLength(creditCards);
  const [cityMin, cityMax] = minMaxLength(US_CITIES);
  const [stateMin, stateMax] = minMaxLength(US_STATES);
  const [itemMin, itemMax] = minMaxLength(itemNames);
  const [descMin, descMax] = minMaxLength(descriptions);

  pools = {
    names,
    emails,
    creditCards,
    itemNames,
    descriptions,
    hotUrls,
    channelNames,
    channelUrls,
    personSizeMin: PERSON_FIXED_SIZE + nameMin + emailMin + ccMin + cityMin + stateMin,
    personSizeMax: PERSON_FIXED_SIZE + nameMax + emailMax + ccMax + cityMax + stateMax,
    auctionSizeMin: AUCTION_FIXED_SIZE + itemMin + descMin,
    auctionSizeMax: AUCTION_FIXED_SIZE + itemMax + descMax,
  };
  return pools;
}

// ---------------------------------------------------------------------------------------------
// `extra` padding tables.
//
// Java StringsGenerator.nextExtra(currentSize, avg): if currentSize > avg -> ""; else with
// d = avg - currentSize and delta = round(0.2 d), length = d - delta + nextInt(2 delta) (d when
// delta = 0); the content is a random slice of a 1 MiB random string. Here a table holds
// 2^bits random variants of every length reachable for the kind's possible currentSize range.

interface ExtraTable {
  /** Shortest length in the table. */
  readonly lo: number;
  readonly bits: number;
  readonly mask: number;
  /** strings[((length - lo) << bits) | variant]. */
  readonly strings: readonly string[];
}

/** Upper bound on characters held by flat (copied) padding strings of one table. */
const FLAT_BUDGET_CHARS = 4 * 1024 * 1024;
/** Upper bound on entries of a table of sliced strings. */
const SLICED_BUDGET_ENTRIES = 1 << 16;
const MAX_VARIANT_BITS = 4;
const MASTER_MIN_CHARS = 1 << 20;

let master: Buffer | undefined;
let masterString: string | undefined;

/** Random lowercase letters; the content of any prefix does not depend on the total size. */
function getMaster(minChars: number): Buffer {
  if (master === undefined || master.length < minChars) {
    const size = Math.max(minChars, MASTER_MIN_CHARS, master === undefined ? 0 : master.length * 2);
    const rng = new PoolRandom(0x45585452); // "EXTR"
    const buf = Buffer.allocUnsafe(size);
    for (let i = 0; i < size; i++) buf[i] = 97 + rng.nextInt(26);
    master = buf;
    masterString = undefined;
  }
  return master;
}

function extraRange(avg: number, currentSize: number): [number, number] {
  if (currentSize > avg) return [0, 0];
  const d = avg - currentSize;
  const delta = Math.round(d * 0.2);
  return delta === 0 ? [d, d] : [d - delta, d + delta - 1];
}

const extraTableCache = new Map<string, ExtraTable>();

function getExtraTable(salt: number, avg: number, sizeMin: number, sizeMax: number): ExtraTable {
  const key = `${salt}:${avg}:${sizeMin}:${sizeMax}`;
  const cached = extraTableCache.get(key);
  if (cached !== undefined) return cached;

  let lo = Infinity;
  let hi = 0;
  for (let c = sizeMin; c <= sizeMax; c++) {
    const [a, b] = extraRange(avg, c);
    if (a < lo) lo = a;
    if (b > hi) hi = b;
  }
  const span = hi - lo + 1;
  const totalChars = ((lo + hi) * span) / 2;
  let bits = MAX_VARIANT_BITS;
  while (bits > 0 && totalChars * (1 << bits) > FLAT_BUDGET_CHARS) bits--;
  const flat = totalChars * (1 << bits) <= FLAT_BUDGET_CHARS;
  if (!flat) {
    bits = MAX_VARIANT_BITS;
    while (bits > 0 && span * (1 << bits) > SLICED_BUDGET_ENTRIES) bits--;
  }
  const k = 1 << bits;

  // Offsets are drawn modulo a size that depends only on this table, so the table content does
  // not depend on which other tables were built before (the master's prefix is stable).
  const modulus = Math.max(MASTER_MIN_CHARS, 2 * (hi + 1));
  const buf = getMaster(modulus);
  let whole = '';
  if (!flat) {
    if (masterString === undefined) masterString = buf.toString('latin1');
    whole = masterString;
  }
  const rng = new PoolRandom(hash32(salt) ^ avg);
  const strings: string[] = new Array<string>(span * k);
  for (let len = lo; len <= hi; len++) {
    for (let v = 0; v < k; v++) {
      const off = rng.nextInt(modulus - len + 1);
      strings[((len - lo) << bits) | v] = flat ? buf.toString('latin1', off, off + len) : whole.substring(off, off + len);
    }
  }
  const table: ExtraTable = { lo, bits, mask: k - 1, strings };
  extraTableCache.set(key, table);
  return table;
}

/** Java nextExtra for a variable currentSize. */
function extraFor(t: ExtraTable, avg: number, currentSize: number, r: number): string {
  if (currentSize > avg) return '';
  const d = avg - currentSize;
  const delta = Math.round(d * 0.2);
  const len = delta === 0 ? d : d - delta + below(r, 2 * delta);
  return t.strings[((len - t.lo) << t.bits) | (r & t.mask)]!;
}

// ---------------------------------------------------------------------------------------------
// Per-config prepared state (cached by config object identity).

interface Prepared {
  readonly personProportion: number;
  readonly auctionProportion: number;
  /** personProportion + auctionProportion. */
  readonly bidOffset: number;
  readonly totalProportion: number;
  readonly interEventDelayUs: number;
  readonly baseTimeMs: number;
  readonly firstEventId: number;
  readonly outOfOrderGroupSize: number;
  /** Largest accepted event number. */
  readonly maxEventNumber: number;
  readonly seedMix: number;
  /** hash32(seedMix): the seed contribution of event ids below 2^32. */
  readonly seedLow: number;
  readonly hotAuctionRatio: number;
  readonly hotSellersRatio: number;
  readonly hotBiddersRatio: number;
  readonly numInFlightAuctions: number;
  readonly numActivePeople: number;
  /** Java nextAuctionLengthMs: events until numInFlightAuctions more auctions exist. */
  readonly numEventsForAuctions: number;
  readonly avgPersonByteSize: number;
  readonly avgAuctionByteSize: number;
  readonly personExtras: ExtraTable;
  readonly auctionExtras: ExtraTable;
  readonly bidExtras: ExtraTable;
  /** 2 * delta of the (constant) bid extra length range; 0 = fixed length. */
  readonly bidExtraSpan: number;
  readonly names: readonly string[];
  readonly emails: readonly string[];
  readonly creditCards: readonly string[];
  readonly itemNames: readonly string[];
  readonly descriptions: readonly string[];
  readonly hotChannels: readonly string[];
  readonly hotUrls: readonly string[];
  readonly channelNames: readonly string[];
  readonly channelUrls: readonly string[];
}

function prepare(config: ResolvedNexmarkConfig): Prepared {
  // Re-resolve: validates configs that did not come from resolveNexmarkConfig (e.g. cloned ones).
  const c = resolveNexmarkConfig(config);
  const pl = getPools();
  const seedLo = c.seed >>> 0;
  const seedHi = Math.floor(c.seed / 4294967296) >>> 0;
  const seedMix = hash32(seedLo ^ hash32(seedHi ^ 0x632be5ab));
  const bidSize = extraRange(c.avgBidByteSize, BID_FIXED_SIZE);
  let maxEventNumber = Number.MAX_SAFE_INTEGER - c.firstEventId;
  if (c.outOfOrderGroupSize > 1) maxEventNumber = Math.min(maxEventNumber, Math.floor(Number.MAX_SAFE_INTEGER / 953));
  return {
    personProportion: c.personProportion,
    auctionProportion: c.auctionProportion,
    bidOffset: c.personProportion + c.auctionProportion,
    totalProportion: c.totalProportion,
    interEventDelayUs: c.interEventDelayUs,
    baseTimeMs: c.baseTimeMs,
    firstEventId: c.firstEventId,
    outOfOrderGroupSize: c.outOfOrderGroupSize,
    maxEventNumber,
    seedMix,
    seedLow: hash32(seedMix),
    hotAuctionRatio: c.hotAuctionRatio,
    hotSellersRatio: c.hotSellersRatio,
    hotBiddersRatio: c.hotBiddersRatio,
    numInFlightAuctions: c.numInFlightAuctions,
    numActivePeople: c.numActivePeople,
    numEventsForAuctions:
      c.auctionProportion === 0 ? 0 : Math.floor((c.numInFlightAuctions * c.totalProportion) / c.auctionProportion),
    avgPersonByteSize: c.avgPersonByteSize,
    avgAuctionByteSize: c.avgAuctionByteSize,
    personExtras: getExtraTable(1, c.avgPersonByteSize, pl.personSizeMin, pl.personSizeMax),
    auctionExtras: getExtraTable(2, c.avgAuctionByteSize, pl.auctionSizeMin, pl.auctionSizeMax),
    bidExtras: getExtraTable(3, c.avgBidByteSize, BID_FIXED_SIZE, BID_FIXED_SIZE),
    bidExtraSpan: bidSize[1] - bidSize[0] + 1 > 1 ? bidSize[1] - bidSize[0] + 1 : 0,
    names: pl.names,
    emails: pl.emails,
    creditCards: pl.creditCards,
    itemNames: pl.itemNames,
    descriptions: pl.descriptions,
    hotChannels: HOT_CHANNELS,
    hotUrls: pl.hotUrls,
    channelNames: pl.channelNames,
    channelUrls: pl.channelUrls,
  };
}

const preparedByConfig = new WeakMap<object, Prepared>();
let lastConfig: ResolvedNexmarkConfig | undefined;
let lastPrepared: Prepared | undefined;

function prepared(config: ResolvedNexmarkConfig): Prepared {
  if (config === null || typeof config !== 'object') {
    throw new NexmarkConfigError('expected a resolved config object (see resolveNexmarkConfig)');
  }
  let p = preparedByConfig.get(config);
  if (p === undefined) {
    p = prepare(config);
    preparedByConfig.set(config, p);
  }
  lastConfig = config;
  lastPrepared = p;
  return p;
}

function checkEventNumber(eventNumber: number, p: Prepared): void {
  if (!(eventNumber >= 0 && eventNumber <= p.maxEventNumber && Math.floor(eventNumber) === eventNumber)) {
    throw new RangeError(
      `Nexmark event number must be an integer in [0, ${p.maxEventNumber}] (got ${String(eventNumber)})`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Event number / id / time arithmetic (Java GeneratorConfig).

/** Java nextAdjustedEventNumber: pseudo-random permutation inside groups of `g` events. */
function adjustEventNumber(n: number, g: number): number {
  return Math.floor(n / g) * g + ((n * 953) % g);
}

/** Java timestampForEvent: baseTime + (long)(n * interEventDelayUs) / 1000. */
function timestampOf(p: Prepared, n: number): number {
  return p.baseTimeMs + Math.floor(Math.floor(n * p.interEventDelayUs) / 1000);
}

/** Seed of an event's random stream. */
function seedOf(p: Prepared, eventId: number): number {
  const high = eventId < 4294967296 ? p.seedLow : hash32(Math.floor(eventId * INV_2_32) ^ p.seedMix);
  return hash32((eventId >>> 0) ^ high) | 0;
}

/** Java PersonGenerator.nextBase0PersonId: one of the active people, or a few ahead. */
function nextBase0PersonId(p: Prepared, lastBase0PersonId: number, r: number): number {
  const numPeople = lastBase0PersonId + 1;
  const activePeople = numPeople < p.numActivePeople ? numPeople : p.numActivePeople;
  return numPeople - activePeople + below(r, activePeople + PERSON_ID_LEAD);
}

/** Java AuctionGenerator.nextBase0AuctionId: one of the in-flight auctions, or a few ahead. */
function nextBase0AuctionId(p: Prepared, lastBase0AuctionId: number, r: number): number {
  let minAuction = lastBase0AuctionId - p.numInFlightAuctions;
  if (minAuction < 0) minAuction = 0;
  return minAuction + below(r, lastBase0AuctionId - minAuction + 1 + AUCTION_ID_LEAD);
}

// ---------------------------------------------------------------------------------------------
// Event construction. `s` is the event's random stream state; each draw is
// `s = (s + GAMMA) | 0; r = hash32(s)`.

function makePerson(p: Prepared, epoch: number, offset: number, dateTime: number, s: number): Person {
  s = (s + GAMMA) | 0;
  const name = p.names[below(hash32(s), p.names.length)]!;
  s = (s + GAMMA) | 0;
  let r = hash32(s);
  const emailAddress = p.emails[r & POOL_MASK]!;
  const creditCard = p.creditCards[(r >>> POOL_BITS) & POOL_MASK]!;
  s = (s + GAMMA) | 0;
  const city = US_CITIES[below(hash32(s), US_CITIES.length)]!;
  s = (s + GAMMA) | 0;
  const state = US_STATES[below(hash32(s), US_STATES.length)]!;
  const currentSize =
    PERSON_FIXED_SIZE + name.length + emailAddress.length + creditCard.length + city.length + state.length;
  s = (s + GAMMA) | 0;
  r = hash32(s);
  const extra = extraFor(p.personExtras, p.avgPersonByteSize, currentSize, r);
  return {
    kind: 'person',
    id: epoch * p.personProportion + offset + FIRST_PERSON_ID,
    name,
    emailAddress,
    creditCard,
    city,
    state,
    dateTime,
    extra,
  };
}

function makeAuction(p: Prepared, epoch: number, offset: number, n: number, dateTime: number, s: number): Auction {
  const lastAuction = epoch * p.auctionProportion + offset - p.personProportion;
  const lastPerson = epoch * p.personProportion + p.personProportion - 1;

  s = (s + GAMMA) | 0;
  let seller: number;
  // P(auction by a hot seller) = 1 - 1/hotSellersRatio.
  if (below(hash32(s), p.hotSellersRatio) > 0) {
    seller = Math.floor(lastPerson / HOT_SELLER_RATIO) * HOT_SELLER_RATIO;
  } else {
    s = (s + GAMMA) | 0;
    seller = nextBase0PersonId(p, lastPerson, hash32(s));
  }
  s = (s + GAMMA) | 0;
  const category = FIRST_CATEGORY_ID + below(hash32(s), NUM_CATEGORIES);
  s = (s + GAMMA) | 0;
  const initialBid = priceOf(hash32(s));
  // Java nextAuctionLengthMs: on average the time until numInFlightAuctions more auctions exist.
  const horizonMs = timestampOf(p, n + p.numEventsForAuctions) - dateTime;
  s = (s + GAMMA) | 0;
  const expires = dateTime + 1 + below(hash32(s), horizonMs > 0 ? horizonMs * 2 : 1);
  s = (s + GAMMA) | 0;
  const r = hash32(s);
  const itemName = p.itemNames[r & POOL_MASK]!;
  const description = p.descriptions[(r >>> POOL_BITS) & POOL_MASK]!;
  s = (s + GAMMA) | 0;
  const reserve = initialBid + priceOf(hash32(s));
  s = (s + GAMMA) | 0;
  const extra = extraFor(
    p.auctionExtras,
    p.avgAuctionByteSize,
    AUCTION_FIXED_SIZE + itemName.length + description.length,
    hash32(s),
  );
  return {
    kind: 'auction',
    id: lastAuction + FIRST_AUCTION_ID,
    itemName,
    description,
    initialBid,
    reserve,
    dateTime,
    expires,
    seller: seller + FIRST_PERSON_ID,
    category,
    extra,
  };
}

function makeBid(p: Prepared, epoch: number, dateTime: number, s: number): Bid {
  const lastAuction = epoch * p.auctionProportion + p.auctionProportion - 1;
  const lastPerson = epoch * p.personProportion + p.personProportion - 1;

  s = (s + GAMMA) | 0;
  let auction: number;
  // P(bid for a hot auction) = 1 - 1/hotAuctionRatio.
  if (below(hash32(s), p.hotAuctionRatio) > 0) {
    auction = Math.floor(lastAuction / HOT_AUCTION_RATIO) * HOT_AUCTION_RATIO;
  } else {
    s = (s + GAMMA) | 0;
    auction = nextBase0AuctionId(p, lastAuction, hash32(s));
  }
  s = (s + GAMMA) | 0;
  let bidder: number;
  // P(bid by a hot bidder) = 1 - 1/hotBiddersRatio. Hot bidders are the second person of a batch
  // so that they differ from hot sellers.
  if (below(hash32(s), p.hotBiddersRatio) > 0) {
    bidder = Math.floor(lastPerson / HOT_BIDDER_RATIO) * HOT_BIDDER_RATIO + 1;
  } else {
    s = (s + GAMMA) | 0;
    bidder = nextBase0PersonId(p, lastPerson, hash32(s));
  }
  s = (s + GAMMA) | 0;
  const price = priceOf(hash32(s));
  s = (s + GAMMA) | 0;
  let r = hash32(s);
  let channel: string;
  let url: string;
  // Half of the bids come through one of the 4 hot channels.
  if ((r & 1) !== 0) {
    const i = (r >>> 1) & 3;
    channel = p.hotChannels[i]!;
    url = p.hotUrls[i]!;
  } else {
    const i = below(r, CHANNELS_NUMBER);
    channel = p.channelNames[i]!;
    url = p.channelUrls[i]!;
  }
  s = (s + GAMMA) | 0;
  r = hash32(s);
  const t = p.bidExtras;
  const extra = t.strings[((p.bidExtraSpan === 0 ? 0 : below(r, p.bidExtraSpan)) << t.bits) | (r & t.mask)]!;
  return {
    kind: 'bid',
    auction: auction + FIRST_AUCTION_ID,
    bidder: bidder + FIRST_PERSON_ID,
    price,
    channel,
    url,
    dateTime,
    extra,
  };
}

// ---------------------------------------------------------------------------------------------
// Public API.

/**
 * The event with the given event number (0, 1, 2, ...). Pure: the same number and config always
 * give an equal event, independent of call order. Kind, ids and randomness derive from the event
 * id `firstEventId + adjusted(eventNumber)`; `dateTime` is {@link nexmarkTimestampAt}.
 *
 * Pass the same resolved config object on every call: per-config tables are cached by identity.
 *
 * @throws RangeError if eventNumber is not a non-negative safe integer.
 */
export function nexmarkEventAt(eventNumber: number, config: ResolvedNexmarkConfig): NexmarkEvent {
  const p = config === lastConfig ? lastPrepared! : prepared(config);
  checkEventNumber(eventNumber, p);
  const n = p.outOfOrderGroupSize === 1 ? eventNumber : adjustEventNumber(eventNumber, p.outOfOrderGroupSize);
  const dateTime = timestampOf(p, n);
  const eventId = p.firstEventId + n;
  const epoch = Math.floor(eventId / p.totalProportion);
  const offset = eventId - epoch * p.totalProportion;
  const s = seedOf(p, eventId);
  if (offset >= p.bidOffset) return makeBid(p, epoch, dateTime, s);
  if (offset >= p.personProportion) return makeAuction(p, epoch, offset, n, dateTime, s);
  return makePerson(p, epoch, offset, dateTime, s);
}

/** Kind of the event `nexmarkEventAt(eventNumber, config)` returns, without generating it. */
export function nexmarkEventKindAt(eventNumber: number, config: ResolvedNexmarkConfig): NexmarkEventKind {
  const p = config === lastConfig ? lastPrepared! : prepared(config);
  checkEventNumber(eventNumber, p);
  const n = p.outOfOrderGroupSize === 1 ? eventNumber : adjustEventNumber(eventNumber, p.outOfOrderGroupSize);
  const offset = (p.firstEventId + n) % p.totalProportion;
  return offset >= p.bidOffset ? 'bid' : offset >= p.personProportion ? 'auction' : 'person';
}

/**
 * Event time (epoch ms) of event `eventNumber`, i.e. its `dateTime`: Java
 * `timestampForEvent(nextAdjustedEventNumber)` = baseTimeMs + floor(floor(n * interEventDelayUs) / 1000).
 * Non-decreasing in eventNumber when outOfOrderGroupSize is 1.
 */
export function nexmarkTimestampAt(eventNumber: number, config: ResolvedNexmarkConfig): number {
  const p = config === lastConfig ? lastPrepared! : prepared(config);
  checkEventNumber(eventNumber, p);
  const n = p.outOfOrderGroupSize === 1 ? eventNumber : adjustEventNumber(eventNumber, p.outOfOrderGroupSize);
  return timestampOf(p, n);
}

/**
 * A watermark valid after emitting events 0..eventNumber-1 in order: the minimum event time of
 * event `eventNumber` and all later ones (Java `nextEventNumberForWatermark`). Equals
 * {@link nexmarkTimestampAt} when outOfOrderGroupSize is 1.
 */
export function nexmarkWatermarkAt(eventNumber: number, config: ResolvedNexmarkConfig): number {
  const p = config === lastConfig ? lastPrepared! : prepared(config);
  checkEventNumber(eventNumber, p);
  const g = p.outOfOrderGroupSize;
  return timestampOf(p, Math.floor(eventNumber / g) * g);
}
