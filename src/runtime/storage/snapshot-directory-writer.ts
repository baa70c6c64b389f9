import { rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CHECKSUMMED_FILE_HEADER_BYTES } from './checksummed-file.js';
import type { StateFileSource } from './checkpoint-storage.js';
import { METADATA_FILE_NAME, stateFileName } from './checkpoint-paths.js';
import { fsyncDirectory, writeChecksummedFileDurably, writeFileDurably } from './durable-file.js';
import { encodeMetadata } from './metadata-codec.js';
import { randomHex, type RandomBytes } from './random-bytes.js';
import { stateHandlesOf, type CheckpointMetadata, type FileScope, type FileStateHandle, type StateHandle } from './snapshot-format.js';
import { CheckpointStorageError, isNotFound, storageWriteError, type DirectoryRole } from './storage-errors.js';

export interface SnapshotDirectoryWriterOptions {
  /** The snapshot directory; it exists already. */
  readonly dir: string;
  readonly role: DirectoryRole;
  /** Names the snapshot in messages: "checkpoint 12", "savepoint /sp/savepoint-...". */
  readonly label: string;
  /** The job's shared/ directory, or undefined when shared files are not allowed (savepoints). */
  readonly sharedDir: string | undefined;
  /** State smaller than this is returned inline instead of written to a file. */
  readonly dataInlineThresholdBytes: number;
  readonly random: RandomBytes;
}

type WriterState = 'open' | 'finalizing' | 'finalized' | 'aborted';

/**
 * Writes one snapshot into its directory: state files while it is open, then `_metadata`
 * last. Lifecycle: open -> finalizing -> finalized, or open -> aborted; a failed finalize
 * returns to open so the caller can abort. Used by filesystem checkpoints and savepoints.
 */
export class SnapshotDirectoryWriter {
  private state: WriterState = 'open';
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Files written into the shared directory: removed again when the snapshot is aborted. */
  private readonly sharedWritten = new Set<string>();

  constructor(private readonly options: SnapshotDirectoryWriterOptions) {}

  get dir(): string {
    return this.options.dir;
  }

  get isFinalized(): boolean {
    return this.state === 'finalized';
  }

  /** Inline below the threshold, otherwise a checksummed file `<dir>/<uuid>` (temp file, fsync, rename). */
  writeStateFile(bytes: Uint8Array, scope: FileScope = 'exclusive'): Promise<StateHandle> {
    return this.writeStateFileFrom(stateFileSourceOf(bytes), scope);
  }

  /** As writeStateFile, for bytes another thread holds: that thread writes the file. */
  async writeStateFileFrom(source: StateFileSource, scope: FileScope = 'exclusive'): Promise<StateHandle> {
    this.assertState('open', 'write state');
    const o = this.options;
    if (source.sizeBytes < o.dataInlineThresholdBytes) return { kind: 'inline', bytes: new Uint8Array(await source.bytes()) };
    const name = stateFileName(o.random(16));
    // A savepoint has no shared directory: everything is its own.
    const shared = scope === 'shared' && o.sharedDir !== undefined;
    const path = join(shared ? o.sharedDir! : o.dir, name);
    if (shared) this.sharedWritten.add(path);
    const write = source.writeFile(path, randomHex(o.random, 8));
    this.inFlight.add(write);
    let checksum: number;
    try {
      checksum = await write;
    } catch (e) {
      if (this.state === 'aborted') throw new CheckpointStorageError('io', `${o.label} was aborted while state was being written`, { cause: e });
      throw storageWriteError(e, o.dir, o.role);
    } finally {
      this.inFlight.delete(write);
    }
    const handle: FileStateHandle = { kind: 'file', scope: shared ? 'shared' : 'exclusive', path: name, sizeBytes: source.sizeBytes, checksum };
    return handle;
  }

  /**
   * Checks `metadata`, checks that every file it references exists with the right size,
   * makes the state files durable (directory fsync), then writes `_metadata` atomically
   * (temp file, fsync, rename, directory fsync), then fsyncs the parent so the snapshot
   * directory's own entry survives a crash. Returns the size of `_metadata`.
   */
  async finalize(metadata: CheckpointMetadata): Promise<number> {
    this.assertState('open', 'finalize');
    this.state = 'finalizing';
    const o = this.options;
    try {
      const encoded = encodeMetadata(metadata);
      await this.checkReferencedFiles(metadata);
      const metadataPath = join(o.dir, METADATA_FILE_NAME);
      if (await exists(metadataPath)) throw new Error(`${o.label} already has ${metadataPath}; a snapshot is finalized once`);
      try {
        await fsyncDirectory(o.dir);
        await writeFileDurably(metadataPath, encoded, randomHex(o.random, 8));
        await fsyncDirectory(o.dir);
        await fsyncDirectory(dirname(o.dir)); // the entry of the snapshot directory itself
      } catch (e) {
        throw storageWriteError(e, o.dir, o.role);
      }
      this.state = 'finalized';
      return encoded.length;
    } finally {
      if (this.state === 'finalizing') this.state = 'open';
    }
  }

  /** Stops accepting writes and waits for the writes in flight; the caller removes the directory. */
  async abort(): Promise<void> {
    if (this.state === 'finalized') throw new Error(`${this.options.label} is complete; discard it instead of aborting it`);
    this.state = 'aborted';
    await Promise.allSettled([...this.inFlight]);
    await Promise.all([...this.sharedWritten].map((f) => rm(f, { force: true })));
    this.sharedWritten.clear();
  }

  private assertState(expected: WriterState, action: string): void {
    if (this.state !== expected) throw new Error(`cannot ${action}: ${this.options.label} is ${this.state}`);
  }

  private async checkReferencedFiles(metadata: CheckpointMetadata): Promise<void> {
    const o = this.options;
    for (const h of stateHandlesOf(metadata)) {
      if (h.kind !== 'file') continue;
      let base: string;
      if (h.scope === 'exclusive') base = o.dir;
      else if (o.sharedDir !== undefined) base = o.sharedDir;
      else throw new Error(`${o.label} references shared file ${h.path}, but it has no shared directory`);
      const path = join(base, h.path);
      let sizeBytes: number;
      try {
        sizeBytes = (await stat(path)).size;
      } catch (e) {
        if (isNotFound(e)) {
          throw new CheckpointStorageError('io', `${o.label} references state file ${path}, which does not exist (removed while the checkpoint ran?)`, { cause: e });
        }
        throw e;
      }
      if (sizeBytes !== CHECKSUMMED_FILE_HEADER_BYTES + h.sizeBytes) {
        throw new Error(`${o.label} references ${path} as ${h.sizeBytes} state bytes, but the file has ${sizeBytes - CHECKSUMMED_FILE_HEADER_BYTES}`);
      }
    }
  }
}

/** Bytes of this thread as a state file source: the header and the payload go to the file as two chunks (no copy). */
export function stateFileSourceOf(bytes: Uint8Array): StateFileSource {
  return { sizeBytes: bytes.length, bytes: async () => bytes, writeFile: (path, randomHex16) => writeChecksummedFileDurably(path, bytes, 'state', randomHex16) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}
