import type { PostgresCdcSplit } from './cdc-types.js';
import { formatLsn, parseLsn } from './lsn.js';

/**
 * Where the source is in the stream of committed transactions, and what a restored source
 * skips. Pure: fed the stream's events in order, it says which changes to emit and what the
 * checkpointed position is.
 *
 * pgoutput sends whole committed transactions in the order of their commit records, so a
 * position is (the commit LSN of a transaction, how many of its changes were emitted):
 * `resumeLsn` says every transaction committed below it was emitted whole (it is the end of
 * the last one's commit record, or a keepalive's WAL position between transactions), and
 * `partial` names the transaction a checkpoint fell into. The slot's confirmed flush position
 * is only ever moved to a completed checkpoint's `resumeLsn`, so after a restore the server
 * sends again every transaction from there on, the one in `partial` included; this class
 * drops what the checkpoint covered: transactions committed below `resumeLsn`, and the first
 * `emitted` changes of `partial`.
 */
export class ChangePosition {
  private resumeLsn: bigint;
  private partial: { commitLsn: bigint; emitted: number } | undefined;
  /** The transaction being received: its commit LSN, changes seen, and how many of them to skip. */
  private current: { commitLsn: bigint; seen: number; skip: number } | undefined;

  constructor(split: PostgresCdcSplit) {
    this.resumeLsn = parseLsn(split.resumeLsn, 'the checkpointed resumeLsn');
    this.partial = split.partial === undefined ? undefined : { commitLsn: parseLsn(split.partial.commitLsn, 'the checkpointed partial.commitLsn'), emitted: split.partial.emitted };
    if (this.partial !== undefined && this.partial.commitLsn < this.resumeLsn) {
      throw new Error(`postgres cdc source: checkpointed position is inconsistent: the partial transaction ${split.partial!.commitLsn} commits below resumeLsn ${split.resumeLsn}`);
    }
  }

  /** The transaction committed at `commitLsn` begins. */
  begin(commitLsn: bigint): void {
    if (this.current !== undefined) throw new Error(`postgres cdc source: a transaction (commit ${formatLsn(commitLsn)}) began inside another (commit ${formatLsn(this.current.commitLsn)})`);
    let skip = 0;
    if (commitLsn < this.resumeLsn) skip = Number.POSITIVE_INFINITY;
    else if (this.partial !== undefined) {
      if (commitLsn === this.partial.commitLsn) skip = this.partial.emitted;
      else {
        throw new Error(
          `postgres cdc source: the checkpoint was in the middle of the transaction committed at ${formatLsn(this.partial.commitLsn)} ` +
            `(${this.partial.emitted} changes emitted), but the server sent the one committed at ${formatLsn(commitLsn)} instead: ` +
            `the rest of that transaction is lost. Was the slot advanced or recreated by something else than this job?`,
        );
      }
    }
    this.current = { commitLsn, seen: 0, skip };
  }

  /**
   * A change of the current transaction: its position in the transaction (1-based) when it is
   * new, `undefined` when the checkpoint covered it already. A new change moves the position
   * whether or not it is emitted (a change of a table not captured counts too, so the count
   * means the same after a restart).
   */
  change(): number | undefined {
    const c = this.current;
    if (c === undefined) throw new Error('postgres cdc source: a change arrived outside of a transaction');
    c.seen++;
    if (c.seen <= c.skip) return undefined;
    this.partial = { commitLsn: c.commitLsn, emitted: c.seen };
    return c.seen;
  }

  /** The current transaction's commit record ends at `endLsn`: every transaction below it is emitted. */
  commit(endLsn: bigint): void {
    const c = this.current;
    if (c === undefined) throw new Error('postgres cdc source: a commit arrived outside of a transaction');
    this.current = undefined;
    if (c.skip === Number.POSITIVE_INFINITY) return;
    if (endLsn <= c.commitLsn) throw new Error(`postgres cdc source: commit record end ${formatLsn(endLsn)} is not after its start ${formatLsn(c.commitLsn)}`);
    this.partial = undefined;
    if (endLsn > this.resumeLsn) this.resumeLsn = endLsn;
  }

  /**
   * The server has sent everything committed below `lsn` (a keepalive's WAL position). Taken
   * only between transactions: it lets the slot of a publication without changes move on.
   */
  progress(lsn: bigint): void {
    if (this.current !== undefined || this.partial !== undefined) return;
    if (lsn > this.resumeLsn) this.resumeLsn = lsn;
  }

  /** Whether a transaction is open (being received). */
  get inTransaction(): boolean {
    return this.current !== undefined;
  }

  /** The slot position a checkpoint of this position may confirm. */
  get confirmableLsn(): bigint {
    return this.resumeLsn;
  }

  snapshot(slot: string): PostgresCdcSplit {
    return {
      slot,
      resumeLsn: formatLsn(this.resumeLsn),
      ...(this.partial === undefined ? {} : { partial: { commitLsn: formatLsn(this.partial.commitLsn), emitted: this.partial.emitted } }),
    };
  }
}
