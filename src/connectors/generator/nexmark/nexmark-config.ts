/**
 * Configuration of the Nexmark event generator.
 *
 * Mirrors the parts of the Nexmark benchmark's `NexmarkConfiguration` / `GeneratorConfig`
 * (nexmark/nexmark, nexmark-flink) that influence event content and event timestamps.
 */

export interface NexmarkConfig {
  /**
   * Overall event rate in events per second (event time, not wall-clock). Determines the
   * inter-event delay and thereby every timestamp. The Nexmark benchmark suites run at
   * 10,000,000 events/s (`nexmark.workload.suite.*.tps`), which is the default here.
   */
  firstEventRate: number;
  /**
   * Number of parallel generators the rate is divided over (Java `numEventGenerators`). Each
   * generator timeline is `numEventGenerators` times slower than `firstEventRate`.
   */
  numEventGenerators: number;
  /** Relative frequency of person events (Java default 1). */
  personProportion: number;
  /** Relative frequency of auction events (Java default 3). */
  auctionProportion: number;
  /** Relative frequency of bid events (Java default 46). */
  bidProportion: number;
  /** Average idealised size of a person event in bytes; `extra` pads up to it. */
  avgPersonByteSize: number;
  /** Average idealised size of an auction event in bytes. */
  avgAuctionByteSize: number;
  /** Average idealised size of a bid event in bytes. */
  avgBidByteSize: number;
  /** A bid goes to a 'hot' auction with probability 1 - 1/hotAuctionRatio. */
  hotAuctionRatio: number;
  /** An auction is opened by a 'hot' seller with probability 1 - 1/hotSellersRatio. */
  hotSellersRatio: number;
  /** A bid is placed by a 'hot' bidder with probability 1 - 1/hotBiddersRatio. */
  hotBiddersRatio: number;
  /** Average number of auctions in flight; bounds the window of auctions bids refer to. */
  numInFlightAuctions: number;
  /** Maximum number of people considered active when picking sellers and bidders. */
  numActivePeople: number;
  /**
   * Events are shuffled (ids and timestamps) inside groups of this many consecutive event
   * numbers, as in Java `nextAdjustedEventNumber`. 1 = in order.
   */
  outOfOrderGroupSize: number;
  /** Event time of event number 0, epoch milliseconds. */
  baseTimeMs: number;
  /** Offset added to the event number to obtain the event id (kind, ids and random seed). */
  firstEventId: number;
  /**
   * Number of events a bounded source should emit; 0 or Infinity = unbounded. Not enforced by
   * `nexmarkEventAt` (which is defined for every event number).
   */
  maxEvents: number;
  /** Extra seed mixed into every event's random stream (extension, not in Java). */
  seed: number;
}

export interface ResolvedNexmarkConfig extends Readonly<NexmarkConfig> {
  /** personProportion + auctionProportion + bidProportion. */
  readonly totalProportion: number;
  /** Delay between two consecutive events of one generator, in microseconds. */
  readonly interEventDelayUs: number;
}

export class NexmarkConfigError extends Error {
  constructor(message: string) {
    super(`Invalid Nexmark config: ${message}`);
    this.name = 'NexmarkConfigError';
  }
}

export const defaultNexmarkConfig: Readonly<NexmarkConfig> = Object.freeze({
  firstEventRate: 10_000_000,
  numEventGenerators: 1,
  personProportion: 1,
  auctionProportion: 3,
  bidProportion: 46,
  avgPersonByteSize: 200,
  avgAuctionByteSize: 500,
  avgBidByteSize: 100,
  hotAuctionRatio: 2,
  hotSellersRatio: 4,
  hotBiddersRatio: 4,
  numInFlightAuctions: 100,
  numActivePeople: 1000,
  outOfOrderGroupSize: 1,
  baseTimeMs: 1_700_000_000_000,
  firstEventId: 0,
  maxEvents: 0,
  seed: 0,
});

/** Upper bound for the average byte sizes (keeps the precomputed padding tables sane). */
export const MAX_AVG_BYTE_SIZE = 1 << 20;

const KNOWN_KEYS: ReadonlySet<string> = new Set<string>([
  ...Object.keys(defaultNexmarkConfig),
  // Derived keys, accepted (and recomputed) so a resolved config can be resolved again.
  'totalProportion',
  'interEventDelayUs',
]);

function describe(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function intAtLeast(name: keyof NexmarkConfig, v: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new NexmarkConfigError(`${name} must be an integer ${range} (got ${describe(v)})`);
  }
}

/**
 * Fill in defaults, validate and derive. The result is frozen; pass the same object to the
 * generator functions on every call (they cache per-config tables by object identity).
 *
 * @throws NexmarkConfigError for unknown keys or nonsensical values.
 */
export function resolveNexmarkConfig(partial: Partial<NexmarkConfig> = {}): ResolvedNexmarkConfig {
  if (partial === null || typeof partial !== 'object') {
    throw new NexmarkConfigError(`expected an object (got ${describe(partial)})`);
  }
  for (const key of Object.keys(partial)) {
    if (!KNOWN_KEYS.has(key)) throw new NexmarkConfigError(`unknown option '${key}'`);
  }
  const c: NexmarkConfig = { ...defaultNexmarkConfig };
  for (const key of Object.keys(defaultNexmarkConfig) as (keyof NexmarkConfig)[]) {
    const v = partial[key];
    if (v !== undefined) c[key] = v;
  }

  if (typeof c.firstEventRate !== 'number' || !Number.isFinite(c.firstEventRate) || c.firstEventRate <= 0) {
    throw new NexmarkConfigError(`firstEventRate must be a finite number > 0 events/s (got ${describe(c.firstEventRate)})`);
  }
  intAtLeast('numEventGenerators', c.numEventGenerators, 1);
  intAtLeast('personProportion', c.personProportion, 0);
  intAtLeast('auctionProportion', c.auctionProportion, 0);
  intAtLeast('bidProportion', c.bidProportion, 0);
  const totalProportion = c.personProportion + c.auctionProportion + c.bidProportion;
  if (totalProportion < 1) {
    throw new NexmarkConfigError('personProportion + auctionProportion + bidProportion must be >= 1');
  }
  if (c.personProportion === 0) {
    throw new NexmarkConfigError('personProportion must be >= 1: auctions and bids reference persons');
  }
  if (c.auctionProportion === 0 && c.bidProportion > 0) {
    throw new NexmarkConfigError('auctionProportion must be >= 1 when bidProportion > 0: bids reference auctions');
  }
  intAtLeast('avgPersonByteSize', c.avgPersonByteSize, 0, MAX_AVG_BYTE_SIZE);
  intAtLeast('avgAuctionByteSize', c.avgAuctionByteSize, 0, MAX_AVG_BYTE_SIZE);
  intAtLeast('avgBidByteSize', c.avgBidByteSize, 0, MAX_AVG_BYTE_SIZE);
  intAtLeast('hotAuctionRatio', c.hotAuctionRatio, 1);
  intAtLeast('hotSellersRatio', c.hotSellersRatio, 1);
  intAtLeast('hotBiddersRatio', c.hotBiddersRatio, 1);
  intAtLeast('numInFlightAuctions', c.numInFlightAuctions, 0);
  intAtLeast('numActivePeople', c.numActivePeople, 1);
  intAtLeast('outOfOrderGroupSize', c.outOfOrderGroupSize, 1);
  if (typeof c.baseTimeMs !== 'number' || !Number.isSafeInteger(c.baseTimeMs)) {
    throw new NexmarkConfigError(`baseTimeMs must be an integer epoch-ms value (got ${describe(c.baseTimeMs)})`);
  }
  intAtLeast('firstEventId', c.firstEventId, 0);
  if (c.maxEvents !== Number.POSITIVE_INFINITY) intAtLeast('maxEvents', c.maxEvents, 0);
  if (typeof c.seed !== 'number' || !Number.isSafeInteger(c.seed)) {
    throw new NexmarkConfigError(`seed must be a safe integer (got ${describe(c.seed)})`);
  }

  // Same floating-point expression as Java GeneratorConfig, so timestamps match bit for bit.
  const interEventDelayUs = (1000000.0 / c.firstEventRate) * c.numEventGenerators;
  if (!(interEventDelayUs > 0) || !Number.isFinite(interEventDelayUs)) {
    throw new NexmarkConfigError(`firstEventRate ${c.firstEventRate} yields an unusable inter-event delay`);
  }

  return Object.freeze({
    ...c,
    maxEvents: c.maxEvents === 0 ? Number.POSITIVE_INFINITY : c.maxEvents,
    totalProportion,
    interEventDelayUs,
  });
}
