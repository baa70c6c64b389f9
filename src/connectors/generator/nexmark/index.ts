export type { Auction, Bid, NexmarkEvent, NexmarkEventKind, Person } from './nexmark-model.js';
export { FIRST_AUCTION_ID, FIRST_CATEGORY_ID, FIRST_PERSON_ID, NUM_CATEGORIES } from './nexmark-model.js';
export type { NexmarkConfig, ResolvedNexmarkConfig } from './nexmark-config.js';
export {
  MAX_AVG_BYTE_SIZE,
  NexmarkConfigError,
  defaultNexmarkConfig,
  resolveNexmarkConfig,
} from './nexmark-config.js';
export {
  nexmarkEventAt,
  nexmarkEventKindAt,
  nexmarkTimestampAt,
  nexmarkWatermarkAt,
} from './nexmark-generator.js';
