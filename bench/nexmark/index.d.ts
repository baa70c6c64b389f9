import type { DataStream } from 'sluice';
import type { NexmarkEvent } from 'sluice/connectors';

export interface NexmarkQueryOptions {
  /** q13's side input file (events-file.js writeSideInputFile). */
  readonly sideInput?: string;
  /** q10's output directory: its partitioned files go there (none: q10 writes no files). */
  readonly filesDir?: string;
}

export interface NexmarkQuery {
  readonly name: string;
  readonly title: string;
  /** Why the query's output is not the same from run to run, when it is not. */
  readonly nondeterministic?: string;
  build(events: DataStream<NexmarkEvent>, options?: NexmarkQueryOptions): DataStream<unknown>;
  format(record: never): string;
}

export declare const nexmarkQueries: Readonly<Record<string, NexmarkQuery>>;
