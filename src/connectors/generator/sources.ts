import { checkKnownOptions } from '../../util/known-options.js';
import { GeneratorSource } from './generator-source.js';
import { nexmarkEventAt, nexmarkTimestampAt } from './nexmark/nexmark-generator.js';
import { resolveNexmarkConfig, type NexmarkConfig } from './nexmark/nexmark-config.js';
import type { NexmarkEvent } from './nexmark/nexmark-model.js';

export interface NumberSourceOptions {
  readonly from?: number;
  /** How many numbers; omit for an unbounded source. */
  readonly count?: number;
  readonly eventsPerSecond?: number;
  /** See GeneratorSourceOptions: 'on-request' hands out ranges of the numbers to readers that ask. */
  readonly splitAssignment?: 'static' | 'on-request';
  readonly splits?: number;
}

const NUMBER_OPTION_NAMES = { from: true, count: true, eventsPerSecond: true, splitAssignment: true, splits: true } as const satisfies Record<keyof NumberSourceOptions, true>;

/** The numbers from, from + 1, ...: bounded with `count`, otherwise unbounded. */
export function numberSource(options: NumberSourceOptions = {}): GeneratorSource<number> {
  // A misspelt `count` made an unbounded source: a job that never ends.
  checkKnownOptions('numberSource', options, NUMBER_OPTION_NAMES);
  return new GeneratorSource<number>({ generate: (i) => i, ...options });
}

export interface NexmarkSourceOptions {
  /** Number of events; omit for an unbounded stream. */
  readonly events?: number;
  /** Events per second over all subtasks; omit for as fast as possible. */
  readonly eventsPerSecond?: number;
  /** Generator settings (proportions, hot ratios, event time rate, ...). */
  readonly config?: Partial<NexmarkConfig>;
}

const NEXMARK_OPTION_NAMES = { events: true, eventsPerSecond: true, config: true } as const satisfies Record<keyof NexmarkSourceOptions, true>;

/**
 * Nexmark events (persons, auctions, bids in proportions 1:3:46) with event timestamps,
 * generated deterministically from the event number.
 */
export function nexmarkSource(options: NexmarkSourceOptions = {}): GeneratorSource<NexmarkEvent> {
  checkKnownOptions('nexmarkSource', options, NEXMARK_OPTION_NAMES);
  const config = resolveNexmarkConfig(options.config);
  return new GeneratorSource<NexmarkEvent>({
    generate: (i) => nexmarkEventAt(i, config),
    timestampOf: (i) => nexmarkTimestampAt(i, config),
    ...(options.events === undefined ? {} : { count: options.events }),
    ...(options.eventsPerSecond === undefined ? {} : { eventsPerSecond: options.eventsPerSecond }),
  });
}
