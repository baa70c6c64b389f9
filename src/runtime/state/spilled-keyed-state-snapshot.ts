import { unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { open, readFile, unlink } from 'node:fs/promises';
import { assert } from '../../util/assert.js';
import { isSpillFileName } from '../storage/checkpoint-paths.js';
import { CHECKSUMMED_FILE_HEADER_BYTES, decode } from '../storage/checksummed-file.js';
import { moveFileDurably } from '../storage/durable-file.js';
import type { KeyGroupRange } from './key-group.js';
import type { KeyedStateFile } from './keyed-state-file.js';

/** Spill files neither used nor discarded yet: removed when the process exits. */
const live = new Set<string>();
let removeAtExit = false;

function track(path: string): void {
  live.add(path);
  if (removeAtExit) return;
  removeAtExit = true;
  process.once('exit', () => {
    for (const p of live) removeQuietly(p);
  });
}

/** A spilled snapshot dropped without being used or discarded (an acknowledgement that went nowhere) takes its file with it when collected. */
const unused = new FinalizationRegistry<string>((path) => {
  live.delete(path);
  void unlink(path).catch(() => undefined);
});

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

/**
 * A spilled snapshot as a TaskManager sends it to the JobManager: its file, in a directory
 * both reach (the job's taskowned/ directory), and what the file holds.
 */
export interface SpilledSnapshotFileRef {
  readonly kind: 'spilled-keyed-state-file';
  /** The file's name in the shared directory. */
  readonly fileName: string;
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
  readonly sizeBytes: number;
  readonly keyGroupOffsets: readonly number[];
  readonly checksum: number;
}

/**
 * A full keyed state snapshot of the lmdb backend, spilled to a local file key group by key
 * group (spill-file-writer.ts) instead of assembled on the heap: the file is the keyed state
 * file, checksummed header and all, so `writeFile` only moves it into checkpoint storage
 * (a rename, or a copy by the kernel across filesystems, then fsync), and peak heap use while
 * snapshotting is about one key group, not the state.
 *
 * Used up by the first `writeFile`, `bytes` or `filePieces` (the file goes with it);
 * `discard` removes the file unused, and so do garbage collection of one dropped unused and
 * the exit of the process.
 */
export class SpilledKeyedStateSnapshot implements KeyedStateFile {
  readonly formatVersion = 1;
  private used = false;

  constructor(
    /** The spill file: header and payload of the keyed state file. */
    readonly path: string,
    readonly keyGroupRange: KeyGroupRange,
    readonly maxParallelism: number,
    /** Size of the keyed state file's payload. */
    readonly sizeBytes: number,
    readonly keyGroupOffsets: readonly number[],
    /** CRC-32C of the payload, as in the file's header. */
    readonly checksum: number,
  ) {
    track(path);
    unused.register(this, path, this);
  }

  /** The snapshot of a file another process spilled into `dir` and handed over (`handOver`); its file is this process's from here. */
  static handedOver(ref: SpilledSnapshotFileRef, dir: string): SpilledKeyedStateSnapshot {
    if (!isSpillFileName(ref.fileName)) throw new Error(`refusing a spilled snapshot named ${JSON.stringify(ref.fileName)}: not the name of a spill file`);
    return new SpilledKeyedStateSnapshot(join(dir, ref.fileName), ref.keyGroupRange, ref.maxParallelism, ref.sizeBytes, ref.keyGroupOffsets, ref.checksum);
  }

  /**
   * Gives the file to another process that reaches `dir`, where it must be (a TaskManager
   * sends it to the JobManager, which writes it): this snapshot is used up, and its file is
   * no longer removed here.
   */
  handOver(dir: string): SpilledSnapshotFileRef {
    if (dirname(this.path) !== dir) throw new Error(`cannot hand over the spilled snapshot ${this.path}: it is not in ${dir}, which the receiver reads`);
    this.use('hand over');
    return {
      kind: 'spilled-keyed-state-file',
      fileName: basename(this.path),
      keyGroupRange: this.keyGroupRange,
      maxParallelism: this.maxParallelism,
      sizeBytes: this.sizeBytes,
      keyGroupOffsets: [...this.keyGroupOffsets],
      checksum: this.checksum,
    };
  }

  /** Moves the spill file durably to `path` (it is the state file already); resolves with the payload's CRC-32C. */
  async writeFile(path: string, randomHex16: string): Promise<number> {
    this.use('write');
    await moveFileDurably(this.path, path, randomHex16);
    return this.checksum;
  }

  /** The payload, read into this heap and checked against its checksum (state inlined into `_metadata`, storage without files). */
  async bytes(): Promise<Uint8Array> {
    this.use('read');
    try {
      const file = await readFile(this.path);
      return decode(file, { file: this.path, checkpointId: undefined, expectedKind: 'state' }).payload;
    } finally {
      await unlink(this.path).catch(() => undefined);
    }
  }

  /**
   * The state file in pieces of `pieceBytes`, read one at a time (an upload to S3 in parts);
   * the file is removed when the iteration ends, also early. Uses the snapshot up when the
   * iteration starts.
   */
  async *filePieces(pieceBytes: number): AsyncIterable<Uint8Array> {
    assert(Number.isSafeInteger(pieceBytes) && pieceBytes > 0, `pieces have a positive size, got ${pieceBytes}`);
    this.use('upload');
    try {
      const handle = await open(this.path, 'r');
      try {
        const total = CHECKSUMMED_FILE_HEADER_BYTES + this.sizeBytes;
        for (let at = 0; at < total; ) {
          const piece = new Uint8Array(Math.min(pieceBytes, total - at));
          for (let filled = 0; filled < piece.length; ) {
            const { bytesRead } = await handle.read(piece, filled, piece.length - filled, at + filled);
            if (bytesRead === 0) throw new Error(`the spilled snapshot ${this.path} ends after ${at + filled} of its ${total} bytes`);
            filled += bytesRead;
          }
          at += piece.length;
          yield piece;
        }
      } finally {
        await handle.close();
      }
    } finally {
      await unlink(this.path).catch(() => undefined);
    }
  }

  discard(): void {
    if (this.used) return;
    this.used = true;
    this.forget();
    removeQuietly(this.path);
  }

  private use(what: string): void {
    if (this.used) throw new Error(`cannot ${what} the spilled full snapshot ${this.path}: it was written, read or discarded already`);
    this.used = true;
    this.forget();
  }

  private forget(): void {
    unused.unregister(this);
    live.delete(this.path);
  }
}
