import { randomBytes } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { assert } from '../../util/assert.js';
import { spillFileName } from '../storage/checkpoint-paths.js';
import { CHECKSUMMED_FILE_HEADER_BYTES, encodeHeaderOf } from '../storage/checksummed-file.js';
import { crc32c } from '../storage/crc32c.js';
import type { KeyGroupRange } from './key-group.js';
import { segmentSizeBytes, writeSegment, type PackedStateName } from './packed-key-groups.js';
import { SpilledKeyedStateSnapshot } from './spilled-keyed-state-snapshot.js';

/** Segments smaller than this are gathered into one buffer of this size before they are written. */
const CHUNK_BYTES = 1 << 20;

type WriterState = 'open' | 'finished' | 'aborted';

/**
 * Streams a full keyed state file into a spill file, one key group at a time: the same
 * segments at the same offsets as `packKeyGroups` (they are written by the same code,
 * `writeSegment`), after room for the checksummed file's header, which `finish` writes last
 * with the payload's length and CRC-32C (computed as the segments go). Only the segment being
 * written (in a buffer kept for the next large one) and a 1 MiB chunk of small segments are
 * on the heap.
 *
 * Lifecycle: open -> finished (a SpilledKeyedStateSnapshot owns the file), or open -> aborted
 * (the file is removed).
 */
export class SpillFileWriter {
  private state: WriterState = 'open';
  private readonly offsets: number[] = [];
  private nextKeyGroup: number;
  private payloadBytes = 0;
  private checksum = 0;
  private readonly chunk = new Uint8Array(CHUNK_BYTES);
  private readonly chunkView = new DataView(this.chunk.buffer);
  private chunkUsed = 0;
  /** Where a segment above CHUNK_BYTES is written, grown as needed and reused. */
  private large = new Uint8Array(0);

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    readonly keyGroupRange: KeyGroupRange,
    readonly maxParallelism: number,
  ) {
    this.nextKeyGroup = keyGroupRange.startKeyGroup;
  }

  /** Creates a new spill file in `dir` (which exists). */
  static async create(dir: string, keyGroupRange: KeyGroupRange, maxParallelism: number): Promise<SpillFileWriter> {
    const path = join(dir, spillFileName(randomBytes(8)));
    let handle: FileHandle;
    try {
      handle = await open(path, 'wx');
    } catch (e) {
      throw new Error(
        `cannot create a spill file for a full keyed state snapshot in ${dir}: ${(e as Error).message}; ` +
          "it must be a writable directory with room for a copy of the subtask's state (for the lmdb backend: state.backend.lmdb.localdir)",
        { cause: e },
      );
    }
    return new SpillFileWriter(path, handle, keyGroupRange, maxParallelism);
  }

  /** Bytes of the payload so far. */
  get sizeBytes(): number {
    return this.payloadBytes + this.chunkUsed;
  }

  /**
   * Appends the segment of `keyGroup`, the next key group of the range: `groups[i]` is the
   * group of the state named `names[i]` (undefined: nothing of it in this key group).
   */
  async append(keyGroup: number, names: readonly PackedStateName[], groups: readonly (Uint8Array | undefined)[], timers: Uint8Array | undefined): Promise<void> {
    assert(this.state === 'open', `a spill file is appended to while open, not ${this.state}`);
    assert(keyGroup === this.nextKeyGroup, `key groups are spilled in order: expected ${this.nextKeyGroup}, got ${keyGroup}`);
    this.offsets.push(this.sizeBytes);
    this.nextKeyGroup++;
    const size = segmentSizeBytes(names, groups, timers);
    if (size === 0) return;
    if (size > CHUNK_BYTES - this.chunkUsed) await this.flush();
    if (size <= CHUNK_BYTES) {
      const end = writeSegment(this.chunk, this.chunkView, this.chunkUsed, names, groups, timers);
      assert(end === this.chunkUsed + size, 'a key group segment fills exactly the bytes counted for it');
      this.chunkUsed = end;
      return;
    }
    // A large segment goes to the file from a buffer of its own.
    if (this.large.length < size) this.large = new Uint8Array(Math.max(size, 2 * this.large.length));
    const end = writeSegment(this.large, new DataView(this.large.buffer), 0, names, groups, timers);
    assert(end === size, 'a key group segment fills exactly the bytes counted for it');
    await this.writePayload(this.large.subarray(0, size));
  }

  /** Writes what is buffered and the header, closes the file; the snapshot owns it from here. */
  async finish(): Promise<SpilledKeyedStateSnapshot> {
    assert(this.state === 'open', `a spill file is finished while open, not ${this.state}`);
    assert(
      this.nextKeyGroup === this.keyGroupRange.endKeyGroup + 1,
      `a spill file holds every key group of ${this.keyGroupRange.startKeyGroup}..${this.keyGroupRange.endKeyGroup}; the next would be ${this.nextKeyGroup}`,
    );
    await this.flush();
    await writeAt(this.handle, encodeHeaderOf(this.payloadBytes, this.checksum, 'state'), 0);
    await this.handle.close();
    this.state = 'finished';
    return new SpilledKeyedStateSnapshot(this.path, this.keyGroupRange, this.maxParallelism, this.payloadBytes, this.offsets, this.checksum);
  }

  /** Gives up: closes and removes the file. Idempotent; nothing once finished. */
  async abort(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'aborted';
    await this.handle.close().catch(() => undefined);
    await unlink(this.path).catch(() => undefined);
  }

  private async flush(): Promise<void> {
    if (this.chunkUsed === 0) return;
    const used = this.chunkUsed;
    this.chunkUsed = 0;
    await this.writePayload(this.chunk.subarray(0, used));
  }

  private async writePayload(bytes: Uint8Array): Promise<void> {
    this.checksum = crc32c(bytes, this.checksum);
    await writeAt(this.handle, bytes, CHECKSUMMED_FILE_HEADER_BYTES + this.payloadBytes);
    this.payloadBytes += bytes.length;
  }
}

/** Writes all of `bytes` at `position` (a short write continues where it stopped). */
async function writeAt(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    assert(bytesWritten > 0, 'a write to a spill file makes progress');
    done += bytesWritten;
  }
}
