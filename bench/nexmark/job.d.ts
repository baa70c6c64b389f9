import type { NexmarkEvent } from 'sluice/connectors';
import type { NexmarkQuery, NexmarkQueryOptions } from './index.js';

export declare function runToLines(query: NexmarkQuery, events: readonly NexmarkEvent[], parallelism: number, options?: NexmarkQueryOptions): Promise<string[]>;
