/**
 * Exactly-once counting through a failure: a keyed count kept in checkpointed state, written
 * by a two-phase-commit sink that commits one file per checkpoint.
 *
 *   npx sluice run examples/checkpointed-count.ts <out-dir> [numbers] [fail-at]
 *   npx sluice run -p 2 -D execution.checkpointing.dir=/tmp/checkpoints examples/checkpointed-count.ts out
 *
 * The numbers 0 .. numbers-1 (default 20000, at 10000 per second) are keyed by `n % 10`;
 * for every number the job emits `key,count` with the key's running count. The map before
 * the count throws once, when it sees `fail-at` (default 12000; -1 for no failure): the job
 * restarts from the latest completed checkpoint, the source rewinds to the position stored
 * in it, the counts come back from it, and the transaction that was open is aborted.
 *
 * What readers see is `<out-dir>/committed/*.txt`: every line `k,c` for c = 1 .. (count of
 * key k) exactly once, despite the failure. Transactions are staged in `<out-dir>/pending/`.
 */
import { mkdirSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  defineJob,
  TwoPhaseCommitSink,
  valueState,
  type Collector,
  type KeyedProcessContext,
  type KeyedProcessFunction,
  type KeyedRuntimeContext,
  type TwoPhaseCommitContext,
  type ValueState,
} from 'sluice';
import { numberSource } from 'sluice/connectors';

/** A transaction is kept in checkpoints, so it is plain data: the name of its file. */
interface FileTxn {
  readonly id: string;
}

const isMissing = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * One file per transaction: lines are buffered in memory, written and fsynced to
 * `pending/<id>.txt` at the checkpoint barrier (preCommit), and renamed into `committed/`
 * when the checkpoint completes (commit). A rename is atomic, and a second commit of the same
 * transaction (after a restore) finds the file already moved: commit is idempotent.
 */
class CommittedFilesSink extends TwoPhaseCommitSink<string, FileTxn> {
  private readonly buffers = new Map<string, string[]>();
  private readonly run = randomUUID().slice(0, 8);
  private nextTxn = 0;

  constructor(private readonly dir: string) {
    super();
    mkdirSync(join(dir, 'pending'), { recursive: true });
    mkdirSync(join(dir, 'committed'), { recursive: true });
  }

  private pending(txn: FileTxn): string {
    return join(this.dir, 'pending', `${txn.id}.txt`);
  }

  /** Synchronous, as the base class requires: the file is only written at the barrier. */
  beginTransaction(ctx: TwoPhaseCommitContext): FileTxn {
    const id = `${this.run}-${ctx.subtaskIndex}-${this.nextTxn++}`;
    this.buffers.set(id, []);
    return { id };
  }

  invoke(txn: FileTxn, line: string): void {
    this.buffers.get(txn.id)!.push(line);
  }

  async preCommit(txn: FileTxn): Promise<void> {
    const lines = this.buffers.get(txn.id) ?? [];
    this.buffers.delete(txn.id);
    if (lines.length === 0) return; // nothing to commit
    const file = await open(this.pending(txn), 'w');
    try {
      await file.writeFile(lines.join('\n') + '\n');
      await file.sync();
    } finally {
      await file.close();
    }
  }

  async commit(txn: FileTxn): Promise<void> {
    try {
      await rename(this.pending(txn), join(this.dir, 'committed', `${txn.id}.txt`));
    } catch (e) {
      if (!isMissing(e)) throw e; // missing: committed before (a repeated commit) or empty
    }
  }

  async abort(txn: FileTxn): Promise<void> {
    this.buffers.delete(txn.id);
    await unlink(this.pending(txn)).catch((e: unknown) => {
      if (!isMissing(e)) throw e;
    });
  }
}

/** Counts the numbers of each key in keyed state; emits `key,count` for each number. */
class CountPerKey implements KeyedProcessFunction<number, number, string> {
  private count!: ValueState<number>;

  open(ctx: KeyedRuntimeContext<number>): void {
    this.count = ctx.getState(valueState<number>('count', { defaultValue: 0 }));
  }

  processElement(_n: number, ctx: KeyedProcessContext<number>, out: Collector<string>): void {
    const c = this.count.value()! + 1;
    this.count.update(c);
    out.collect(`${ctx.getCurrentKey()},${c}`);
  }
}

/** Module state survives restarts of the job (the module is loaded once): fail only once. */
let failed = false;

export default defineJob((env, args) => {
  const dir = args[0];
  if (dir === undefined) throw new Error('usage: sluice run examples/checkpointed-count.ts <out-dir> [numbers] [fail-at]');
  const numbers = Number(args[1] ?? 20_000);
  const failAt = Number(args[2] ?? 12_000);
  if (!Number.isSafeInteger(numbers) || numbers < 1) throw new Error(`numbers must be a positive integer, got '${args[1]}'`);
  if (!Number.isSafeInteger(failAt) || failAt < -1) throw new Error(`fail-at must be an integer >= 0, or -1 for no failure, got '${args[2]}'`);

  env.enableCheckpointing(100); // every 100 ms, EXACTLY_ONCE
  env.configure('restart-strategy.type', 'fixed-delay');
  env.configure('restart-strategy.fixed-delay.attempts', 3);
  env.configure('restart-strategy.fixed-delay.delay', '100 ms');

  env
    .fromSource(numberSource({ count: numbers, eventsPerSecond: 10_000 }), 'numbers')
    .uid('numbers')
    .map((n) => {
      if (n === failAt && !failed) {
        failed = true;
        throw new Error(`injected failure at number ${n}`);
      }
      return n;
    })
    .name('fail once')
    .keyBy((n) => n % 10)
    .process(new CountPerKey())
    .name('count per key')
    .uid('count-per-key')
    .sinkTo(new CommittedFilesSink(dir), 'committed files')
    .uid('committed-files');
});
