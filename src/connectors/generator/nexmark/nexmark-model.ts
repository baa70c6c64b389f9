/**
 * Nexmark event model: flat plain objects with a `kind` discriminant.
 *
 * Field names and meaning follow the Nexmark benchmark (nexmark/nexmark, `nexmark-flink` model
 * classes). Ids and prices are plain JS numbers (exact up to 2^53); timestamps are epoch
 * milliseconds.
 *
 * The generator always creates each kind with the properties in the order declared here, so all
 * objects of one kind share one hidden class.
 */

/** A new person registering with the auction site. */
export interface Person {
  readonly kind: 'person';
  /** Person id; the first person has id {@link FIRST_PERSON_ID}. */
  id: number;
  name: string;
  emailAddress: string;
  creditCard: string;
  city: string;
  state: string;
  /** Event time, epoch ms. */
  dateTime: number;
  /** Padding so that the event reaches its configured average byte size. */
  extra: string;
}

/** A new auction opened by a seller. */
export interface Auction {
  readonly kind: 'auction';
  /** Auction id; the first auction has id {@link FIRST_AUCTION_ID}. */
  id: number;
  itemName: string;
  description: string;
  /** Initial bid, in cents. */
  initialBid: number;
  /** Reserve price, in cents (always >= initialBid). */
  reserve: number;
  /** Event time, epoch ms. */
  dateTime: number;
  /** Time the auction closes, epoch ms (always > dateTime). */
  expires: number;
  /** Person id of the seller. */
  seller: number;
  /** Category id, {@link FIRST_CATEGORY_ID} .. FIRST_CATEGORY_ID + 4. */
  category: number;
  extra: string;
}

/** A bid placed on an auction. */
export interface Bid {
  readonly kind: 'bid';
  /** Auction id the bid is for. */
  auction: number;
  /** Person id of the bidder. */
  bidder: number;
  /** Bid price, in cents. */
  price: number;
  channel: string;
  url: string;
  /** Event time, epoch ms. */
  dateTime: number;
  extra: string;
}

export type NexmarkEvent = Person | Auction | Bid;

export type NexmarkEventKind = NexmarkEvent['kind'];

/** Id of the first generated person (ids start here so small data sets still join). */
export const FIRST_PERSON_ID = 1000;
/** Id of the first generated auction. */
export const FIRST_AUCTION_ID = 1000;
/** Lowest category id. */
export const FIRST_CATEGORY_ID = 10;
/** Number of distinct auction categories. */
export const NUM_CATEGORIES = 5;
