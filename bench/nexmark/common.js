// Helpers the Nexmark queries share (bench/nexmark/q*.js). bench/flink has the same in Java
// (Common.java): a change here needs the same change there, or the outputs differ.

/**
 * The last watermark of a bounded input: a timer at this time fires once every record has been
 * processed. The queries that Nexmark defines as updating SQL results (a regular join, a GROUP
 * BY without a window, a ROW_NUMBER top-N) keep their result in keyed state and emit its final
 * value here, once per key: the end state of the SQL query's changelog.
 */
export const END_OF_INPUT = Number.MAX_SAFE_INTEGER;

export const isBid = (e) => e.kind === 'bid';
export const isAuction = (e) => e.kind === 'auction';
export const isPerson = (e) => e.kind === 'person';

/** Fields of an output line: joined with '|' (no generated string holds one). */
export const line = (...fields) => fields.join('|');

/** A DECIMAL(23, 3) held as an integer count of thousandths, as SQL prints it ("1234.500"). */
export function decimal3(thousandths) {
  const whole = Math.floor(thousandths / 1000);
  return `${whole}.${String(thousandths - whole * 1000).padStart(3, '0')}`;
}

/** Nexmark's price ranks (q15-q17): 1 below $100, 2 below $10,000, 3 above. */
export const priceRank = (price) => (price < 10_000 ? 1 : price < 1_000_000 ? 2 : 3);

const DAY_MS = 86_400_000;
/** The UTC day of an epoch-ms time, as a day number. */
export const dayOf = (ms) => Math.floor(ms / DAY_MS);
/** DATE_FORMAT(t, 'yyyy-MM-dd') of a day number (UTC). */
export const formatDay = (day) => new Date(day * DAY_MS).toISOString().slice(0, 10);
/** DATE_FORMAT(t, 'HH:mm') (UTC). */
export const formatHourMinute = (ms) => new Date(ms).toISOString().slice(11, 16);

/**
 * Orders bids for "the highest bid": price descending, then the earliest. Nexmark's SQL leaves
 * the order of bids equal in both undefined (whichever the engine meets first), so that the
 * result does not depend on the order records arrive in at parallelism > 1, the remaining
 * fields decide. Negative when `a` comes first.
 */
export function compareBidsByPriceDesc(a, b) {
  if (a.price !== b.price) return b.price - a.price;
  if (a.dateTime !== b.dateTime) return a.dateTime - b.dateTime;
  return compareRest(a, b);
}

/** "The latest bid": dateTime descending, then the remaining fields as above. */
export function compareBidsByTimeDesc(a, b) {
  if (a.dateTime !== b.dateTime) return b.dateTime - a.dateTime;
  if (a.price !== b.price) return b.price - a.price;
  return compareRest(a, b);
}

function compareRest(a, b) {
  if (a.auction !== b.auction) return a.auction - b.auction;
  if (a.bidder !== b.bidder) return a.bidder - b.bidder;
  return compareStrings(a.channel, b.channel) || compareStrings(a.url, b.url) || compareStrings(a.extra, b.extra);
}

/** UTF-16 code unit order, as Java's String.compareTo. */
const compareStrings = (x, y) => (x < y ? -1 : x > y ? 1 : 0);

export const bidLine = (b) => line(b.auction, b.bidder, b.price, b.channel, b.url, b.dateTime, b.extra);
