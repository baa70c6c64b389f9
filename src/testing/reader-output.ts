import type { ReaderOutput } from '../api/source.js';

/** A ReaderOutput to test a source reader on its own: every record, from any split, goes to `collect`. */
export function collectingReaderOutput<T>(collect: (value: T, timestampMs?: number) => void): ReaderOutput<T> {
  const output: ReaderOutput<T> = {
    collect,
    createOutputForSplit: () => output,
    releaseOutputForSplit: () => {},
  };
  return output;
}
