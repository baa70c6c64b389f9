import { assert } from '../../util/assert.js';
import type { KeyGroupRange } from './key-group.js';
import type { KeyedStateFile } from './keyed-state-file.js';
import type { KeyedStateSnapshot } from './keyed-state-snapshot.js';
import { attachPackedKeyGroups, packedKeyGroupsOf } from './packed-key-groups.js';
import { fromSnapshotParts } from './snapshot-parts.js';
import type { SnapshotThreadMessage, SnapshotThreadReply } from './snapshot-thread-protocol.js';

/** What a held snapshot needs of the snapshot thread (snapshot-thread.ts). */
export interface SnapshotHolder {
  /** Bumped whenever the worker goes away, and with it everything it held. */
  readonly generation: number;
  request(message: SnapshotThreadMessage, transfer: ArrayBuffer[]): Promise<SnapshotThreadReply & { ok: true }>;
  /** Forgets a held snapshot, if the worker of `generation` still runs (it does not start one). */
  release(replica: number, position: number, generation: number): void;
}

interface HeldRef {
  readonly holder: SnapshotHolder;
  readonly replica: number;
  readonly position: number;
  readonly generation: number;
}

/** A held snapshot dropped without being written or taken (its checkpoint was aborted or failed) is released when collected. */
const unused = new FinalizationRegistry<HeldRef>((ref) => ref.holder.release(ref.replica, ref.position, ref.generation));

/**
 * A full keyed state snapshot whose bytes the snapshot thread holds: the thread assembled
 * it from its replica, and it writes the keyed state file itself (`writeFile`), so a full
 * snapshot's bytes never enter the task thread's heap. There, every megabyte of array
 * buffers counts as external memory, and V8 answers with full garbage collections of the
 * task thread's (large) heap: measured, 6 of 10 mark-compacts during nexmark-q5 with a full
 * checkpoint every second. Where the bytes must come here (state sent to a JobManager,
 * checkpoint storage `jobmanager`, inline state), `take` brings them.
 *
 * Used up by the first `writeFile`, `bytes` or `take`; one never used is released when
 * garbage collected, and the thread holds at most a few per backend anyway.
 */
export class HeldKeyedStateSnapshot implements KeyedStateFile {
  readonly formatVersion = 1;
  private used = false;

  constructor(
    private readonly ref: HeldRef,
    readonly keyGroupRange: KeyGroupRange,
    readonly maxParallelism: number,
    /** Size of the keyed state file's payload. */
    readonly sizeBytes: number,
    /** Where each key group starts in the payload. */
    readonly keyGroupOffsets: readonly number[],
  ) {
    unused.register(this, ref, this);
  }

  /** Writes the payload as a checksummed state file at `path`, on the snapshot thread; resolves with its CRC-32C. */
  async writeFile(path: string, randomHex16: string): Promise<number> {
    this.use('write');
    const reply = await this.ref.holder.request({ op: 'write', replica: this.ref.replica, position: this.ref.position, path, randomHex16 }, []);
    assert(reply.checksum !== undefined, 'the snapshot thread answers a write with the checksum');
    return reply.checksum;
  }

  /** The snapshot, brought to this thread. */
  async take(): Promise<KeyedStateSnapshot> {
    this.use('take');
    const reply = await this.ref.holder.request({ op: 'take', replica: this.ref.replica, position: this.ref.position }, []);
    assert(reply.parts !== undefined && reply.keyGroupOffsets !== undefined, 'the snapshot thread answers a take with the full snapshot');
    return keyedSnapshotOfReply(reply.parts, reply.keyGroupOffsets, this.keyGroupRange, this.maxParallelism);
  }

  /** The payload, brought to this thread. */
  async bytes(): Promise<Uint8Array> {
    const s = await this.take();
    return packedKeyGroupsOf(s)!.data;
  }

  /** Releases the held snapshot unwritten (its checkpoint was aborted); nothing when used already. */
  discard(): void {
    if (this.used) return;
    this.used = true;
    unused.unregister(this);
    this.ref.holder.release(this.ref.replica, this.ref.position, this.ref.generation);
  }

  private use(what: string): void {
    if (this.used) throw new Error(`cannot ${what} the full snapshot at position ${this.ref.position}: it was written or taken already`);
    this.used = true;
    unused.unregister(this);
    if (this.ref.generation !== this.ref.holder.generation) {
      throw new Error(`the snapshot thread that held the full snapshot at position ${this.ref.position} is gone; the next checkpoint snapshots again`);
    }
  }
}

/** A full keyed snapshot from the snapshot thread's answer: the groups are views into the payload, which stays attached for writing. */
export function keyedSnapshotOfReply(
  parts: NonNullable<(SnapshotThreadReply & { ok: true })['parts']>,
  keyGroupOffsets: number[],
  keyGroupRange: KeyGroupRange,
  maxParallelism: number,
): KeyedStateSnapshot {
  const full = fromSnapshotParts(parts);
  const snapshot: KeyedStateSnapshot = { formatVersion: 1, maxParallelism, keyGroupRange, states: full.states, timers: full.timers };
  assert(parts.buffers.length === 1, 'a full snapshot from the snapshot thread is one payload');
  attachPackedKeyGroups(snapshot, { data: new Uint8Array(parts.buffers[0]!), offsets: keyGroupOffsets });
  return snapshot;
}
