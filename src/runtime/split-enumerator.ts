/**
 * The JobManager's side of a source with on-request split assignment (Flink's FLIP-27
 * SplitEnumerator, as the IteratorSourceEnumerator of number sequences and the FileSource's
 * split assigner): it holds the splits no reader has yet and hands one out per request, in
 * order. Its state, the splits still unassigned, goes into every checkpoint with the readers'
 * own splits; the two are taken at the same instant (see below), so each split is in exactly
 * one of them.
 *
 * Consistency: the coordinator takes `snapshot()` in the same synchronous step in which it
 * sends the checkpoint's trigger to the source subtasks, and assignments travel on the same
 * FIFO path as triggers (a TaskManager's control connection, then the task's mailbox). A
 * split handed out before the snapshot reaches its reader before the trigger, so it is in
 * the reader's snapshot; one handed out after reaches it after the trigger, so it is still
 * in the enumerator's.
 */
export type SplitAnswer = { readonly kind: 'split'; readonly split: unknown } | { readonly kind: 'no-more-splits' };

export class SplitEnumerator {
  private readonly unassigned: unknown[];
  /** Next split to hand out (the array is not shifted per request). */
  private next = 0;

  constructor(unassigned: readonly unknown[]) {
    this.unassigned = [...unassigned];
  }

  /** A reader asks for a split: the next unassigned one, or none left. */
  handleSplitRequest(): SplitAnswer {
    if (this.next >= this.unassigned.length) return { kind: 'no-more-splits' };
    const split = this.unassigned[this.next]!;
    this.unassigned[this.next] = undefined;
    this.next++;
    return { kind: 'split', split };
  }

  /** The splits not handed out yet, in order: the enumerator's checkpointed state. */
  snapshot(): unknown[] {
    return this.unassigned.slice(this.next);
  }

  get remaining(): number {
    return this.unassigned.length - this.next;
  }
}
