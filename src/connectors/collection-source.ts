import type { InputStatus, ReaderOutput, Source, SourceReader } from '../api/source.js';

/** The split of a collection source: the whole list and the index of the next element. */
export interface CollectionSplit {
  readonly id: string;
  next: number;
}

/** A bounded source of in-memory values, read by one subtask; replayable from its index. */
export class CollectionSource<T> implements Source<T, CollectionSplit> {
  readonly splitKind = 'collection';
  readonly boundedness = 'bounded' as const;
  constructor(private readonly values: readonly T[]) {}

  createSplits(): CollectionSplit[] {
    return [{ id: 'collection', next: 0 }];
  }

  createReader(): SourceReader<T, CollectionSplit> {
    const values = this.values;
    let split: CollectionSplit | undefined;
    let noMore = false;
    return {
      addSplits(splits) {
        for (const s of splits) split = { ...s };
      },
      noMoreSplits() {
        noMore = true;
      },
      pollNext(output: ReaderOutput<T>): InputStatus {
        if (split === undefined || split.next >= values.length) return noMore ? 'end' : 'nothing';
        output.collect(values[split.next++]!);
        return 'more';
      },
      isAvailable: () => new Promise<void>(() => {}),
      snapshotState: () => (split === undefined ? [] : [{ ...split }]),
    };
  }
}
