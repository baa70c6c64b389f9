import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import type { ReaderOutput, Source, SourceReader } from '../src/api/source.js';
import { compareMultisets, TxnStore, TxnStoreSink } from './support/txn-store-sink.js';

/** Like a Kafka reader: every poll emits a whole fetched batch (here 50 numbers). */
class BatchSource implements Source<number, { next: number; end: number }> {
  readonly boundedness = 'bounded' as const;
  constructor(private readonly count: number) {}
  createSplits(): { next: number; end: number }[] {
    return [{ next: 0, end: this.count }];
  }
  createReader(): SourceReader<number, { next: number; end: number }> {
    let splits: { next: number; end: number }[] = [];
    let noMore = false;
    return {
      addSplits: (s) => void (splits = [...splits, ...s.map((x) => ({ ...x }))]),
      noMoreSplits: () => void (noMore = true),
      pollNext: (out: ReaderOutput<number>) => {
        const s = splits.find((x) => x.next < x.end);
        if (s === undefined) return noMore ? 'end' : 'nothing';
        for (let k = 0; k < 50 && s.next < s.end; k++) out.collect(s.next++);
        return 'more';
      },
      isAvailable: () => new Promise((r) => setTimeout(r, 1)),
      snapshotState: () => splits.map((x) => ({ ...x })),
    };
  }
}

/** A transactional sink whose writes take a while (asynchronous), as a network client's do. */
class SlowTxnSink extends TxnStoreSink<number> {
  inFlight = 0;
  maxInFlight = 0;
  override invoke(txn: { id: string }, value: number): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise((resolve) =>
      setImmediate(() => {
        this.inFlight--;
        super.invoke(txn, value);
        resolve();
      }),
    );
  }
}

describe('asynchronous sink writes chained to a source', () => {
  it('a source emitting many records per poll into an async sink: writes one at a time, barriers wait for them, output exactly once', async () => {
    const store = new TxnStore<number>();
    const sink = new SlowTxnSink(store);
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1, 'execution.checkpointing.interval': 20 });
    // Source and sink at the same parallelism are chained: the sink runs inside the source task.
    env.fromSource(new BatchSource(3000), 'batches').sinkTo(sink);
    const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: () => {} });
    const result = await executor.run();
    expect(result.status).toBe('FINISHED');
    expect(executor.jobGraph.vertices.length).toBe(1);
    expect(sink.maxInFlight).toBe(1);
    expect(result.completedCheckpoints).toBeGreaterThan(0);
    expect(compareMultisets(store.committed.map(String), Array.from({ length: 3000 }, (_, i) => String(i)))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});
