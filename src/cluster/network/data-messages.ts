import type { ChannelElement, CheckpointBarrier } from '../../runtime/channel/stream-element.js';

/**
 * Messages between TaskManagers on a data connection. The producer's TaskManager connects
 * to the consumer's; credits flow back on the same connection.
 */
export type DataMessage =
  /** First message: which TaskManager, which attempt of which job, and the shared-secret proof. */
  | { readonly t: 'hello'; readonly jobId: string; readonly attempt: number; readonly from: string; readonly proof: string }
  /** The producer has opened channel `ch`: the consumer grants its initial credit. */
  | { readonly t: 'open'; readonly ch: number }
  /** Elements of channel `ch` in order: batches use one credit each, events none. */
  | { readonly t: 'el'; readonly ch: number; readonly e: ChannelElement }
  /**
   * An unaligned barrier overtaking what the producer had not sent yet: the consumer puts it
   * ahead of its queue, and `rest` (sent without credit) behind the queue, as overtaken.
   */
  | { readonly t: 'prio'; readonly ch: number; readonly barrier: CheckpointBarrier; readonly rest: readonly ChannelElement[] }
  /** Consumer -> producer: room for `n` more batches on channel `ch`. */
  | { readonly t: 'credit'; readonly ch: number; readonly n: number };
