import type { ProcessFunction } from '../api/functions.js';
import type { Sink, SinkWriter } from '../api/sink.js';
import { seededRandom } from './seeded-random.js';

/** One planned fault. Record counts are cumulative over restarts, so every fault fires once. */
export type Fault =
  /** The failing operator throws when it has processed `afterRecords` records in all. */
  | { readonly kind: 'record'; readonly afterRecords: number }
  /** The failing operator throws in the synchronous part of its `n`-th snapshot: the subtask fails. */
  | { readonly kind: 'snapshot-sync'; readonly nthSnapshot: number }
  /** The asynchronous part of its `n`-th snapshot fails: the checkpoint is declined. */
  | { readonly kind: 'snapshot-async'; readonly nthSnapshot: number }
  /** The wrapped sink throws while committing its `n`-th completed checkpoint: recovery commits again. */
  | { readonly kind: 'commit'; readonly nthCommit: number };

export interface FaultPlanOptions {
  readonly seed: number;
  /** Number of record faults. */
  readonly recordFaults?: number;
  /** Record faults are placed in [1, recordRange]. */
  readonly recordRange?: number;
  readonly snapshotSyncFaults?: number;
  readonly snapshotAsyncFaults?: number;
  readonly commitFaults?: number;
  /** Snapshot and commit faults are placed in [1, checkpointRange]. */
  readonly checkpointRange?: number;
}

export class InjectedFault extends Error {
  override readonly name = 'InjectedFault';
}

/**
 * A seeded plan of failures to test a job's fault tolerance, replayable from its seed (print
 * `plan.describe()` with a failing test). Put `plan.failingProcess()` into the job where
 * records and snapshots should fail, and wrap the sink with `plan.wrapSink(sink)` for commit
 * failures. Counters live in the plan, so one plan belongs to one job run.
 */
export class FaultPlan {
  readonly faults: readonly Fault[];
  private records = 0;
  private snapshots = 0;
  private commits = 0;
  private readonly firedFaults = new Set<Fault>();
  /** The attempt in which the last fault fired: one fault per attempt, so each causes a restart. */
  private lastFailedAttempt = -1;

  constructor(
    readonly seed: number,
    faults: readonly Fault[],
  ) {
    this.faults = faults;
  }

  static seeded(o: FaultPlanOptions): FaultPlan {
    const rnd = seededRandom(o.seed);
    const faults: Fault[] = [];
    const distinct = (n: number, range: number): number[] => {
      const picked = new Set<number>();
      while (picked.size < Math.min(n, range)) picked.add(1 + Math.floor(rnd() * range));
      return [...picked].sort((a, b) => a - b);
    };
    for (const r of distinct(o.recordFaults ?? 0, o.recordRange ?? 1)) faults.push({ kind: 'record', afterRecords: r });
    const range = o.checkpointRange ?? 10;
    for (const n of distinct(o.snapshotSyncFaults ?? 0, range)) faults.push({ kind: 'snapshot-sync', nthSnapshot: n });
    for (const n of distinct(o.snapshotAsyncFaults ?? 0, range)) faults.push({ kind: 'snapshot-async', nthSnapshot: n });
    for (const n of distinct(o.commitFaults ?? 0, range)) faults.push({ kind: 'commit', nthCommit: n });
    return new FaultPlan(o.seed, faults);
  }

  /** Faults that fired so far. */
  get fired(): readonly Fault[] {
    return this.faults.filter((f) => this.firedFaults.has(f));
  }

  describe(): string {
    const parts = this.faults.map((f) => {
      switch (f.kind) {
        case 'record':
          return `record ${f.afterRecords}`;
        case 'snapshot-sync':
          return `sync snapshot #${f.nthSnapshot}`;
        case 'snapshot-async':
          return `async snapshot #${f.nthSnapshot}`;
        case 'commit':
          return `commit #${f.nthCommit}`;
      }
    });
    return `fault plan seed ${this.seed}: ${parts.join(', ') || 'no faults'}`;
  }

  private fire(f: Fault | undefined, what: string, attempt: number): void {
    if (f === undefined || this.firedFaults.has(f) || attempt <= this.lastFailedAttempt) return;
    this.firedFaults.add(f);
    this.lastFailedAttempt = attempt;
    throw new InjectedFault(`injected fault: ${what} (${this.describe()})`);
  }

  /** A pass-through function that fails at the planned records and snapshots. */
  /**
   * A pass-through function that fails at the planned records and snapshots. At most one fault
   * that fails a subtask fires per attempt of the job; a fault whose moment passed during an
   * attempt that already failed fires in the next attempt.
   */
  failingProcess<T>(): ProcessFunction<T, T> {
    const plan = this;
    let attempt = 0;
    const due = (kind: Fault['kind'], reached: (f: Fault) => boolean): Fault | undefined =>
      plan.faults.find((f) => f.kind === kind && !plan.firedFaults.has(f) && reached(f));
    return {
      open: (ctx) => {
        attempt = ctx.attemptNumber;
      },
      processElement: (value, _ctx, out) => {
        plan.records++;
        const n = plan.records;
        plan.fire(due('record', (f) => (f as { afterRecords: number }).afterRecords <= n), `failure after ${n} records`, attempt);
        out.collect(value);
      },
      snapshotState: (checkpointId) => {
        plan.snapshots++;
        const n = plan.snapshots;
        plan.fire(due('snapshot-sync', (f) => (f as { nthSnapshot: number }).nthSnapshot <= n), `synchronous snapshot failure (checkpoint ${checkpointId})`, attempt);
        const asyncFault = due('snapshot-async', (f) => (f as { nthSnapshot: number }).nthSnapshot <= n);
        // A declined checkpoint fails the job only beyond the tolerable failures: not limited per attempt.
        if (asyncFault !== undefined) {
          plan.firedFaults.add(asyncFault);
          return Promise.reject(new InjectedFault(`injected fault: asynchronous snapshot failure (checkpoint ${checkpointId})`));
        }
      },
    };
  }

  /**
   * A slow channel: the sink takes `delayMs` after every `everyRecords` records, so the job
   * upstream is backpressured (what unaligned checkpoints are for).
   */
  static slowSink<T>(inner: Sink<T>, o: { everyRecords: number; delayMs: number }): Sink<T> {
    return {
      createWriter: async (ctx, restored) => {
        const w = await inner.createWriter(ctx, restored);
        let n = 0;
        return forwarding(w, {
          write: (v, t) => {
            const r = w.write(v, t);
            if (++n % o.everyRecords !== 0) return r;
            return Promise.resolve(r).then(() => new Promise<void>((res) => setTimeout(res, o.delayMs)));
          },
        });
      },
    };
  }

  /** The sink, failing while it commits the planned checkpoints. */
  wrapSink<T>(sink: Sink<T>): Sink<T> {
    return {
      createWriter: async (ctx, restored): Promise<SinkWriter<T>> => {
        const w = await sink.createWriter(ctx, restored);
        return forwarding(w, {
          write: (v, t) => w.write(v, t),
          notifyCheckpointComplete: async (id) => {
            this.commits++;
            const n = this.commits;
            const fault = this.faults.find((f) => f.kind === 'commit' && !this.firedFaults.has(f) && f.nthCommit <= n);
            this.fire(fault, `failure while committing checkpoint ${id}`, ctx.attemptNumber);
            await w.notifyCheckpointComplete?.(id);
          },
        });
      },
    };
  }
}

/** A writer that does what `w` does, except for the hooks given in `overrides`. */
function forwarding<T>(w: SinkWriter<T>, overrides: Partial<SinkWriter<T>> & Pick<SinkWriter<T>, 'write'>): SinkWriter<T> {
  const out: SinkWriter<T> = { ...overrides };
  if (w.flush && !out.flush) out.flush = (e) => w.flush!(e);
  if (w.prepareCommit && !out.prepareCommit) out.prepareCommit = (id) => w.prepareCommit!(id);
  if (w.snapshotState && !out.snapshotState) out.snapshotState = (id) => w.snapshotState!(id);
  if (w.notifyCheckpointComplete && !out.notifyCheckpointComplete) out.notifyCheckpointComplete = (id) => w.notifyCheckpointComplete!(id);
  if (w.notifyCheckpointAborted && !out.notifyCheckpointAborted) out.notifyCheckpointAborted = (id) => w.notifyCheckpointAborted!(id);
  if (w.close && !out.close) out.close = () => w.close!();
  return out;
}
