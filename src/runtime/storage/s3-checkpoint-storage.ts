import type { Configuration } from '../../config/configuration.js';
import { CHECKSUMMED_FILE_HEADER_BYTES, decode, encode, recordedChecksum } from './checksummed-file.js';
import {
  checkCheckpointId,
  checkJobId,
  checkpointDirName,
  isSavepointDirName,
  isSnapshotFileName,
  METADATA_FILE_NAME,
  parseCheckpointDirName,
  savepointDirName,
  SHARED_DIR_NAME,
  stateFileName,
  tempFileName,
} from './checkpoint-paths.js';
import { assert } from '../../util/assert.js';
import type { CheckpointRef, CheckpointStorage, CheckpointStorageLocation, CompletedCheckpointHandle, StateFileSource } from './checkpoint-storage.js';
import { checksumHex } from './crc32c.js';
import { DATA_INLINE_THRESHOLD_BYTES_DEFAULT } from './filesystem-checkpoint-storage.js';
import { decodeMetadata, encodeMetadata } from './metadata-codec.js';
import { cryptoRandomBytes, randomHex, type RandomBytes } from './random-bytes.js';
import { S3Client, S3RequestError, isS3Uri, parseS3Uri, s3SettingsFrom, s3Uri, type S3Location } from './s3-client.js';
import type { SavepointLocation } from './savepoint-directory.js';
import { locateSnapshot, readSnapshotMetadata, readStateHandleInDirectory } from './snapshot-directory-reader.js';
import { stateHandlesOf, type CheckpointMetadata, type FileScope, type FileStateHandle, type StateHandle } from './snapshot-format.js';
import { CheckpointStorageError, CorruptCheckpointError, wrongJobError, type DirectoryRole } from './storage-errors.js';

/**
 * Checkpoints and savepoints in S3 (or any S3-compatible store), with the layout of the
 * filesystem storage under an `s3://bucket/prefix` directory:
 *
 *   s3://bucket/prefix/<jobId>/chk-N/_metadata + <uuid>    completed checkpoint N
 *   s3://bucket/prefix/<jobId>/shared/                     (incremental checkpoints)
 *   s3://bucket/prefix/<jobId>/_checkpoints                index of completed checkpoints
 *   s3://bucket/target/savepoint-<6 hex>-<12 hex>/_metadata + <uuid>
 *
 * An object appears whole or not at all (PUT and multipart complete are atomic), so the
 * temp-file-and-rename of the filesystem storage is not needed: `_metadata` is written last
 * and a checkpoint is complete once it exists. Finding the retained checkpoints needs no
 * listing: the small `_checkpoints` index object names them, rewritten after each finalize
 * and discard; listing is only a fallback when the index is missing or damaged, plus one
 * HEAD for a checkpoint completed just before a crash that the index does not name yet.
 */

export const S3_CHECKPOINT_INDEX_NAME = '_checkpoints';
const INDEX_FORMAT_VERSION = 1;

export interface S3CheckpointStorageOptions {
  /** execution.checkpointing.dir, an s3:// URI; checkpoints go to `<dir>/<jobId>/`. */
  readonly checkpointsDir: string;
  readonly jobId: string;
  readonly client: S3Client;
  readonly dataInlineThresholdBytes?: number;
  readonly random?: RandomBytes;
}

/** An S3 client from the s3.* options of `config` and the AWS_* variables. */
export function s3ClientFrom(config: Configuration | undefined): S3Client {
  return new S3Client(s3SettingsFrom(config));
}

/** Turns an S3 failure met under `uri` into a CheckpointStorageError naming the cause and the fix. */
export function s3StorageError(e: unknown, uri: string, role: DirectoryRole | 'snapshot'): Error {
  if (!(e instanceof S3RequestError)) return e as Error;
  const setting = role === 'checkpoint directory' ? 'execution.checkpointing.dir' : role === 'savepoint directory' ? 'the savepoint target directory' : 'the path';
  if (e.code === 'NoSuchBucket') {
    return new CheckpointStorageError('not-found', `${role} ${uri}: the bucket ${parseS3Uri(uri).bucket} does not exist (${e.message}); create it, or point ${setting} at an existing bucket`, { cause: e });
  }
  if (e.status === 403 || e.code === 'AccessDenied' || e.code === 'InvalidAccessKeyId' || e.code === 'SignatureDoesNotMatch') {
    return new CheckpointStorageError(
      'not-writable',
      `${role} ${uri} is not accessible (${e.message}); check s3.access-key and s3.secret-key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and the bucket's policy`,
      { cause: e },
    );
  }
  if (e.code === 'NetworkError') {
    return new CheckpointStorageError('io', `${role} ${uri}: cannot reach S3 (${e.message}); check s3.endpoint (or AWS_ENDPOINT_URL) and the network`, { cause: e });
  }
  return new CheckpointStorageError('io', `${role} ${uri}: ${e.message}`, { cause: e });
}

// ---- reading -------------------------------------------------------------------------

/** An s3:// snapshot pointer: its "directory" and the key of its `_metadata`. */
export interface S3Snapshot {
  readonly bucket: string;
  /** Key prefix of the snapshot directory, without a trailing '/'. */
  readonly dirKey: string;
  /** s3://bucket/dirKey: the pointer restores and the inspector print. */
  readonly uri: string;
  readonly checkpointIdFromName: number | undefined;
}

export function locateS3Snapshot(pointer: string): S3Snapshot {
  const { bucket, key } = parseS3Uri(pointer);
  const parts = key.split('/');
  const dirKey = parts[parts.length - 1] === METADATA_FILE_NAME ? parts.slice(0, -1).join('/') : key;
  const name = dirKey.split('/').pop() ?? '';
  return { bucket, dirKey, uri: s3Uri(bucket, dirKey), checkpointIdFromName: parseCheckpointDirName(name) };
}

function join(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/');
}

/** Reads and checks `_metadata` of an s3:// snapshot; a chk-N snapshot must hold checkpoint N. */
export async function readS3SnapshotMetadata(client: S3Client, snapshot: S3Snapshot): Promise<CheckpointMetadata> {
  const file = s3Uri(snapshot.bucket, join(snapshot.dirKey, METADATA_FILE_NAME));
  let bytes: Uint8Array | undefined;
  try {
    bytes = await client.get(snapshot.bucket, join(snapshot.dirKey, METADATA_FILE_NAME));
  } catch (e) {
    throw s3StorageError(e, snapshot.uri, 'snapshot');
  }
  if (bytes === undefined) {
    throw new CheckpointStorageError(
      'not-a-snapshot-directory',
      `not a checkpoint or savepoint directory: ${snapshot.uri} has no _metadata (or does not exist); pass the directory of a completed checkpoint (<dir>/<jobId>/chk-N) or of a savepoint (savepoint-<jobId>-<random>), or its _metadata`,
    );
  }
  const metadata = decodeMetadata(bytes, { file, checkpointId: snapshot.checkpointIdFromName });
  const named = snapshot.checkpointIdFromName;
  if (named !== undefined && metadata.type === 'checkpoint' && metadata.checkpointId !== named) {
    throw new CorruptCheckpointError(file, named, `it describes checkpoint ${metadata.checkpointId}, but lies in chk-${named}`);
  }
  return metadata;
}

/** Reads a state handle of an s3:// snapshot and checks envelope, size and checksum against `_metadata`. */
export async function readS3StateHandle(client: S3Client, handle: StateHandle, checkpoint: CheckpointRef): Promise<Uint8Array> {
  if (handle.kind === 'inline') return handle.bytes;
  const snapshot = locateS3Snapshot(checkpoint.pointer);
  let key: string;
  if (handle.scope === 'exclusive') key = join(snapshot.dirKey, handle.path);
  else if (snapshot.checkpointIdFromName !== undefined) key = join(snapshot.dirKey.split('/').slice(0, -1).join('/'), SHARED_DIR_NAME, handle.path);
  else throw new Error(`shared state file ${handle.path} cannot be resolved: ${snapshot.uri} has no shared directory`);
  const uri = s3Uri(snapshot.bucket, key);
  let bytes: Uint8Array | undefined;
  try {
    bytes = await client.get(snapshot.bucket, key);
  } catch (e) {
    throw s3StorageError(e, snapshot.uri, 'snapshot');
  }
  if (bytes === undefined) throw new CorruptCheckpointError(uri, checkpoint.checkpointId, 'missing: _metadata refers to it, but it does not exist');
  return checkStateFile(bytes, handle, uri, checkpoint.checkpointId);
}

function checkStateFile(bytes: Uint8Array, handle: FileStateHandle, file: string, checkpointId: number | undefined): Uint8Array {
  const { payload, checksum } = decode(bytes, { file, checkpointId, expectedKind: 'state' });
  if (payload.length !== handle.sizeBytes || checksum !== handle.checksum) {
    throw new CorruptCheckpointError(
      file,
      checkpointId,
      `holds ${payload.length} bytes with checksum ${checksumHex(checksum)}, _metadata expects ${handle.sizeBytes} bytes with checksum ${checksumHex(handle.checksum)}`,
    );
  }
  return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
}

/** A snapshot given by path (s3:// or local), opened for a restore or the inspector. */
export interface OpenedSnapshotSource {
  readonly pointer: string;
  readonly metadata: CheckpointMetadata;
  readStateHandle(handle: StateHandle, checkpoint: CheckpointRef): Promise<Uint8Array>;
}

/** Opens a savepoint or retained checkpoint at `path`: s3:// with the S3 settings of `config`, else a local directory. */
export async function openSnapshotSource(path: string, config: Configuration | undefined): Promise<OpenedSnapshotSource> {
  if (isS3Uri(path)) {
    const client = s3ClientFrom(config);
    const snapshot = locateS3Snapshot(path);
    const metadata = await readS3SnapshotMetadata(client, snapshot);
    return { pointer: snapshot.uri, metadata, readStateHandle: (h, ref) => readS3StateHandle(client, h, ref) };
  }
  const snapshot = await locateSnapshot(path);
  const metadata = await readSnapshotMetadata(snapshot);
  return { pointer: snapshot.dir, metadata, readStateHandle: readStateHandleInDirectory };
}

// ---- writing -------------------------------------------------------------------------

type WriterState = 'open' | 'finalizing' | 'finalized' | 'aborted';

/** Writes one snapshot under an S3 prefix: state objects while open, then `_metadata` last. */
class S3SnapshotWriter {
  private state: WriterState = 'open';
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Keys of state objects written (or being written), removed again by abort. */
  readonly written = new Set<string>();

  constructor(
    private readonly o: {
      readonly client: S3Client;
      readonly bucket: string;
      readonly dirKey: string;
      readonly role: DirectoryRole;
      readonly label: string;
      readonly dataInlineThresholdBytes: number;
      readonly random: RandomBytes;
      /** The job's shared/ prefix (checkpoints), undefined for savepoints. */
      readonly sharedDirKey?: string | undefined;
    },
  ) {}

  get uri(): string {
    return s3Uri(this.o.bucket, this.o.dirKey);
  }

  /** Read through a method: the state changes while a write is awaited. */
  private isAborted(): boolean {
    return this.state === 'aborted';
  }

  async writeStateFile(bytes: Uint8Array, scope: FileScope = 'exclusive'): Promise<StateHandle> {
    if (this.state !== 'open') throw new Error(`cannot write state: ${this.o.label} is ${this.state}`);
    if (bytes.length < this.o.dataInlineThresholdBytes) return { kind: 'inline', bytes: new Uint8Array(bytes) };
    const encoded = encode(bytes, 'state');
    return this.putStateObject(bytes.length, scope, async (key) => {
      await this.o.client.put(this.o.bucket, key, encoded);
      return recordedChecksum(encoded);
    });
  }

  /**
   * As writeStateFile, for state held elsewhere: a state file on local disk (a spilled lmdb
   * snapshot) is uploaded part by part as it is read, never whole in memory; other sources
   * are brought here and written.
   */
  async writeStateFileFrom(source: StateFileSource, scope: FileScope = 'exclusive'): Promise<StateHandle> {
    if (this.state !== 'open') throw new Error(`cannot write state: ${this.o.label} is ${this.state}`);
    if (source.sizeBytes < this.o.dataInlineThresholdBytes || source.filePieces === undefined) return this.writeStateFile(await source.bytes(), scope);
    const pieces = source.filePieces(this.o.client.partSizeBytes);
    return this.putStateObject(source.sizeBytes, scope, async (key) => {
      let checksum: number | undefined;
      const withChecksum = async function* (): AsyncIterable<Uint8Array> {
        for await (const p of pieces) {
          if (checksum === undefined) {
            assert(p.length >= CHECKSUMMED_FILE_HEADER_BYTES, 'the first piece of a state file holds its header');
            checksum = recordedChecksum(p);
          }
          yield p;
        }
      };
      await this.o.client.putPieces(this.o.bucket, key, CHECKSUMMED_FILE_HEADER_BYTES + source.sizeBytes, withChecksum());
      assert(checksum !== undefined, 'a state file has a header');
      return checksum;
    });
  }

  /** Uploads a state object of `sizeBytes` payload bytes under a new name with `put` (which resolves with the payload's checksum). */
  private async putStateObject(sizeBytes: number, scope: FileScope, put: (key: string) => Promise<number>): Promise<StateHandle> {
    const o = this.o;
    const name = stateFileName(o.random(16));
    const shared = scope === 'shared' && o.sharedDirKey !== undefined;
    const key = join(shared ? o.sharedDirKey! : o.dirKey, name);
    this.written.add(key);
    const write = put(key);
    this.inFlight.add(write);
    let checksum: number;
    try {
      checksum = await write;
    } catch (e) {
      if (this.isAborted()) throw new CheckpointStorageError('io', `${o.label} was aborted while state was being written`, { cause: e });
      throw s3StorageError(e, this.uri, o.role);
    } finally {
      this.inFlight.delete(write);
    }
    if (this.isAborted()) {
      await o.client.delete(o.bucket, key).catch(() => undefined);
      throw new CheckpointStorageError('io', `${o.label} was aborted while state was being written`);
    }
    return { kind: 'file', scope: shared ? 'shared' : 'exclusive', path: name, sizeBytes, checksum };
  }

  /** Checks every referenced object (HEAD: exists, right size), then writes `_metadata`. */
  async finalize(metadata: CheckpointMetadata, sharedDirKey: string | undefined): Promise<void> {
    if (this.state !== 'open') throw new Error(`cannot finalize: ${this.o.label} is ${this.state}`);
    this.state = 'finalizing';
    const o = this.o;
    try {
      const encoded = encodeMetadata(metadata);
      try {
        for (const h of stateHandlesOf(metadata)) {
          if (h.kind !== 'file') continue;
          let key: string;
          if (h.scope === 'exclusive') key = join(o.dirKey, h.path);
          else if (sharedDirKey !== undefined) key = join(sharedDirKey, h.path);
          else throw new Error(`${o.label} references shared file ${h.path}, but it has no shared directory`);
          const size = await o.client.head(o.bucket, key);
          if (size === undefined) throw new CheckpointStorageError('io', `${o.label} references state file ${s3Uri(o.bucket, key)}, which does not exist (removed while the checkpoint ran?)`);
          if (size !== CHECKSUMMED_FILE_HEADER_BYTES + h.sizeBytes) {
            throw new Error(`${o.label} references ${s3Uri(o.bucket, key)} as ${h.sizeBytes} state bytes, but the object has ${size - CHECKSUMMED_FILE_HEADER_BYTES}`);
          }
        }
        const metadataKey = join(o.dirKey, METADATA_FILE_NAME);
        if ((await o.client.head(o.bucket, metadataKey)) !== undefined) throw new Error(`${o.label} already has ${s3Uri(o.bucket, metadataKey)}; a snapshot is finalized once`);
        await o.client.put(o.bucket, metadataKey, encoded);
      } catch (e) {
        throw s3StorageError(e, this.uri, o.role);
      }
      this.state = 'finalized';
    } finally {
      if (this.state === 'finalizing') this.state = 'open';
    }
  }

  /** Stops accepting writes, waits for the writes in flight, removes what was written. */
  async abort(): Promise<void> {
    if (this.state === 'finalized') throw new Error(`${this.o.label} is complete; discard it instead of aborting it`);
    this.state = 'aborted';
    await Promise.allSettled([...this.inFlight]);
    await this.removeWritten();
  }

  /** Removes the state objects written (best effort: what is left is found by no index). */
  async removeWritten(): Promise<void> {
    await Promise.all([...this.written].map((k) => this.o.client.delete(this.o.bucket, k).catch(() => undefined)));
    this.written.clear();
  }
}

// ---- checkpoint storage --------------------------------------------------------------

export class S3CheckpointStorage implements CheckpointStorage {
  readonly kind = 'filesystem' as const;
  readonly bucket: string;
  /** Key prefix of the job's directory: `<prefix>/<jobId>`. */
  readonly jobKey: string;
  private readonly writers = new Map<number, S3SnapshotWriter>();
  private lastCreatedCheckpointId = 0;
  /** Index updates, one after another. */
  private indexQueue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly checkpointsDir: string,
    readonly jobId: string,
    readonly dataInlineThresholdBytes: number,
    private readonly client: S3Client,
    private readonly random: RandomBytes,
    location: S3Location,
  ) {
    this.bucket = location.bucket;
    this.jobKey = join(location.key, jobId);
  }

  /** Checks that the bucket is there and writable (a probe object, removed again). */
  static async open(options: S3CheckpointStorageOptions): Promise<S3CheckpointStorage> {
    checkJobId(options.jobId);
    const threshold = options.dataInlineThresholdBytes ?? DATA_INLINE_THRESHOLD_BYTES_DEFAULT;
    if (!(threshold >= 0)) throw new Error(`data inline threshold must be >= 0 bytes, got ${threshold}`);
    const location = parseS3Uri(options.checkpointsDir);
    const random = options.random ?? cryptoRandomBytes;
    const storage = new S3CheckpointStorage(s3Uri(location.bucket, location.key), options.jobId, threshold, options.client, random, location);
    const probe = join(storage.jobKey, tempFileName('.write-probe', randomHex(random, 8)));
    try {
      await options.client.put(location.bucket, probe, new Uint8Array(0));
      await options.client.delete(location.bucket, probe);
    } catch (e) {
      throw s3StorageError(e, storage.checkpointsDir, 'checkpoint directory');
    }
    return storage;
  }

  get jobDir(): string {
    return s3Uri(this.bucket, this.jobKey);
  }

  checkpointDir(checkpointId: number): string {
    return s3Uri(this.bucket, this.checkpointKey(checkpointId));
  }

  private checkpointKey(checkpointId: number): string {
    return join(this.jobKey, checkpointDirName(checkpointId));
  }

  async createCheckpointLocation(checkpointId: number): Promise<CheckpointStorageLocation> {
    checkCheckpointId(checkpointId);
    if (checkpointId <= this.lastCreatedCheckpointId) {
      throw new Error(`checkpoint ${checkpointId} was created after checkpoint ${this.lastCreatedCheckpointId}; checkpoint ids strictly increase`);
    }
    this.lastCreatedCheckpointId = checkpointId;
    if (await this.isComplete(checkpointId)) {
      throw new Error(`checkpoint ${checkpointId} already exists complete at ${this.checkpointDir(checkpointId)}; a restored job continues with ids after the checkpoint it restored`);
    }
    const writer = new S3SnapshotWriter({
      client: this.client,
      bucket: this.bucket,
      dirKey: this.checkpointKey(checkpointId),
      role: 'checkpoint directory',
      label: `checkpoint ${checkpointId}`,
      dataInlineThresholdBytes: this.dataInlineThresholdBytes,
      random: this.random,
      sharedDirKey: join(this.jobKey, SHARED_DIR_NAME),
    });
    this.writers.set(checkpointId, writer);
    return { checkpointId, writeStateFile: (bytes, scope) => writer.writeStateFile(bytes, scope), writeStateFileFrom: (source, scope) => writer.writeStateFileFrom(source, scope) };
  }

  async finalizeCheckpoint(metadata: CheckpointMetadata): Promise<CompletedCheckpointHandle> {
    const id = metadata.checkpointId;
    if (metadata.jobId !== this.jobId) throw new Error(`checkpoint ${id} of job ${metadata.jobId} handed to the storage of job ${this.jobId}`);
    if (metadata.type !== 'checkpoint') throw new Error(`checkpoint ${id} has type ${metadata.type}; savepoints go to createSavepointLocation`);
    const writer = this.writers.get(id);
    if (writer === undefined) throw new Error(`cannot finalize checkpoint ${id}: no location was created for it (or it was finalized or aborted already)`);
    await writer.finalize(metadata, join(this.jobKey, SHARED_DIR_NAME));
    this.writers.delete(id);
    try {
      await this.updateIndex((ids) => [...ids.filter((x) => x !== id), id]);
    } catch (e) {
      // Not named by the index: roll the checkpoint back so it is not complete either.
      await this.client.delete(this.bucket, join(this.checkpointKey(id), METADATA_FILE_NAME)).catch(() => undefined);
      await writer.removeWritten();
      throw s3StorageError(e, this.checkpointDir(id), 'checkpoint directory');
    }
    return { jobId: this.jobId, checkpointId: id, pointer: writer.uri };
  }

  async abortCheckpoint(checkpointId: number): Promise<void> {
    const writer = this.writers.get(checkpointId);
    this.writers.delete(checkpointId);
    if (writer !== undefined) await writer.abort();
    else if (await this.isComplete(checkpointId)) throw new Error(`checkpoint ${checkpointId} is complete; discard it instead of aborting it`);
  }

  async writeSharedStateFile(bytes: Uint8Array): Promise<StateHandle> {
    if (bytes.length < this.dataInlineThresholdBytes) return { kind: 'inline', bytes: new Uint8Array(bytes) };
    const shared = join(this.jobKey, SHARED_DIR_NAME);
    const name = stateFileName(this.random(16));
    const encoded = encode(bytes, 'state');
    try {
      await this.client.put(this.bucket, join(shared, name), encoded);
    } catch (e) {
      throw s3StorageError(e, s3Uri(this.bucket, shared), 'checkpoint directory');
    }
    return { kind: 'file', scope: 'shared', path: name, sizeBytes: bytes.length, checksum: recordedChecksum(encoded) };
  }

  async discardSharedFiles(paths: readonly string[]): Promise<void> {
    const shared = join(this.jobKey, SHARED_DIR_NAME);
    try {
      await Promise.all(paths.map((p) => this.client.delete(this.bucket, join(shared, p))));
    } catch (e) {
      throw s3StorageError(e, s3Uri(this.bucket, shared), 'checkpoint directory');
    }
  }

  async discardCheckpoint(checkpointId: number): Promise<void> {
    if (this.writers.has(checkpointId)) throw new Error(`checkpoint ${checkpointId} is in progress; abort it instead of discarding it`);
    const dirKey = this.checkpointKey(checkpointId);
    try {
      // Out of the index, then _metadata, then the state objects: never listed half-deleted.
      await this.updateIndex((ids) => ids.filter((x) => x !== checkpointId));
      await this.client.delete(this.bucket, join(dirKey, METADATA_FILE_NAME));
      const { keys } = await this.client.list(this.bucket, `${dirKey}/`);
      await Promise.all(keys.map((k) => this.client.delete(this.bucket, k)));
    } catch (e) {
      throw s3StorageError(e, this.checkpointDir(checkpointId), 'checkpoint directory');
    }
  }

  async listRetainedCheckpoints(): Promise<CompletedCheckpointHandle[]> {
    let ids: number[];
    try {
      ids = await this.readIndex();
      // A checkpoint completed just before a crash, before the index named it.
      for (let next = Math.max(0, ...ids) + 1; await this.isComplete(next); next++) ids.push(next);
    } catch (e) {
      throw s3StorageError(e, this.jobDir, 'checkpoint directory');
    }
    return [...new Set(ids)].sort((a, b) => b - a).map((checkpointId) => ({ jobId: this.jobId, checkpointId, pointer: this.checkpointDir(checkpointId) }));
  }

  private async isComplete(checkpointId: number): Promise<boolean> {
    return (await this.client.head(this.bucket, join(this.checkpointKey(checkpointId), METADATA_FILE_NAME))) !== undefined;
  }

  private get indexKey(): string {
    return join(this.jobKey, S3_CHECKPOINT_INDEX_NAME);
  }

  /** Completed checkpoint ids from the index object; listing the job's prefix only when the index is missing or damaged. */
  private async readIndex(): Promise<number[]> {
    const bytes = await this.client.get(this.bucket, this.indexKey);
    if (bytes !== undefined) {
      try {
        const v = JSON.parse(new TextDecoder().decode(bytes)) as { formatVersion?: unknown; jobId?: unknown; checkpoints?: unknown };
        if (v.formatVersion === INDEX_FORMAT_VERSION && v.jobId === this.jobId && Array.isArray(v.checkpoints) && v.checkpoints.every((x) => Number.isSafeInteger(x) && (x as number) > 0)) {
          return [...(v.checkpoints as number[])];
        }
      } catch {
        // damaged: rebuilt from a listing below
      }
    }
    const { prefixes } = await this.client.list(this.bucket, `${this.jobKey}/`, '/');
    const ids: number[] = [];
    for (const p of prefixes) {
      const id = parseCheckpointDirName(p.replace(/\/$/, '').split('/').pop() ?? '');
      if (id !== undefined && (await this.isComplete(id))) ids.push(id);
    }
    return ids;
  }

  private updateIndex(change: (ids: number[]) => number[]): Promise<void> {
    const run = this.indexQueue.then(async () => {
      const ids = change(await this.readIndex()).sort((a, b) => b - a);
      const body = JSON.stringify({ formatVersion: INDEX_FORMAT_VERSION, jobId: this.jobId, checkpoints: ids });
      await this.client.put(this.bucket, this.indexKey, new TextEncoder().encode(body));
    });
    this.indexQueue = run.catch(() => undefined);
    return run;
  }

  async readMetadata(pointer: string): Promise<CheckpointMetadata> {
    if (!isS3Uri(pointer)) {
      if (pointer.startsWith('jobmanager://')) {
        throw new CheckpointStorageError('not-found', `checkpoint ${pointer} was held in the memory of a job manager; S3 checkpoint storage cannot read it`);
      }
      return readSnapshotMetadata(await locateSnapshot(pointer));
    }
    const snapshot = locateS3Snapshot(pointer);
    const metadata = await readS3SnapshotMetadata(this.client, snapshot);
    if (snapshot.bucket === this.bucket && snapshot.dirKey.split('/').slice(0, -1).join('/') === this.jobKey && metadata.jobId !== this.jobId) {
      throw wrongJobError(metadata.checkpointId, snapshot.uri, metadata.jobId, this.jobId);
    }
    return metadata;
  }

  async readStateHandle(handle: StateHandle, checkpoint: CheckpointRef): Promise<Uint8Array> {
    if (handle.kind === 'inline') return handle.bytes;
    if (checkpoint.pointer.startsWith('jobmanager://')) {
      throw new CheckpointStorageError('not-found', `checkpoint ${checkpoint.checkpointId} (${checkpoint.pointer}) was held in the memory of a job manager; S3 storage cannot read it`);
    }
    if (!isS3Uri(checkpoint.pointer)) return readStateHandleInDirectory(handle, checkpoint);
    return readS3StateHandle(this.client, handle, checkpoint);
  }
}

// ---- savepoints ----------------------------------------------------------------------

const NAME_ATTEMPTS_MAX = 4;

/** A savepoint under an s3:// target directory: `<target>/savepoint-<6 hex>-<12 hex>/`. */
export async function createS3SavepointLocation(
  targetDir: string,
  jobId: string,
  client: S3Client,
  options: { dataInlineThresholdBytes?: number; random?: RandomBytes } = {},
): Promise<SavepointLocation> {
  checkJobId(jobId);
  const random = options.random ?? cryptoRandomBytes;
  const target = parseS3Uri(targetDir);
  let dirKey: string | undefined;
  try {
    for (let attempt = 0; dirKey === undefined; attempt++) {
      const candidate = join(target.key, savepointDirName(jobId, randomHex(random, 6)));
      if ((await client.head(target.bucket, join(candidate, METADATA_FILE_NAME))) === undefined || attempt + 1 >= NAME_ATTEMPTS_MAX) dirKey = candidate;
    }
  } catch (e) {
    throw s3StorageError(e, targetDir, 'savepoint directory');
  }
  const dir = s3Uri(target.bucket, dirKey);
  const writer = new S3SnapshotWriter({
    client,
    bucket: target.bucket,
    dirKey,
    role: 'savepoint directory',
    label: `savepoint ${dir}`,
    dataInlineThresholdBytes: options.dataInlineThresholdBytes ?? DATA_INLINE_THRESHOLD_BYTES_DEFAULT,
    random,
  });
  return {
    dir,
    jobId,
    writeStateFile: (bytes) => writer.writeStateFile(bytes),
    writeStateFileFrom: (source) => writer.writeStateFileFrom(source),
    async finalize(metadata) {
      if (metadata.type !== 'savepoint') throw new Error(`savepoint ${dir} handed metadata of type ${metadata.type}`);
      if (metadata.jobId !== jobId) throw new Error(`savepoint ${dir} of job ${jobId} handed metadata of job ${metadata.jobId}`);
      await writer.finalize(metadata, undefined);
      return { jobId, checkpointId: metadata.checkpointId, pointer: dir };
    },
    abort: () => writer.abort(),
  };
}

/** Removes an s3:// savepoint, refusing (as for a local one) anything that is not a savepoint. */
export async function disposeS3Savepoint(path: string, client: S3Client): Promise<void> {
  const snapshot = locateS3Snapshot(path);
  const refuse = (why: string): CheckpointStorageError =>
    new CheckpointStorageError('not-a-savepoint-directory', `refusing to dispose ${snapshot.uri}: ${why}; pass the savepoint directory printed when the savepoint was taken`);
  let keys: string[];
  try {
    keys = (await client.list(snapshot.bucket, `${snapshot.dirKey}/`)).keys;
  } catch (e) {
    throw s3StorageError(e, snapshot.uri, 'savepoint directory');
  }
  if (keys.length === 0) throw refuse('it does not exist');
  const names = keys.map((k) => k.slice(snapshot.dirKey.length + 1));
  const foreign = names.filter((n) => n.includes('/') || !isSnapshotFileName(n));
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, ... (${foreign.length} in all)` : '');
    throw refuse(`it holds ${shown}, which Sluice did not write, so it is not a savepoint directory`);
  }
  let isSavepoint = isSavepointDirName(snapshot.dirKey.split('/').pop() ?? '');
  if (names.includes(METADATA_FILE_NAME)) {
    try {
      const metadata = await readS3SnapshotMetadata(client, { ...snapshot, checkpointIdFromName: undefined });
      if (metadata.type !== 'savepoint') throw refuse(`it holds checkpoint ${metadata.checkpointId} of job ${metadata.jobId}, not a savepoint`);
      isSavepoint = true;
    } catch (e) {
      if (!(e instanceof CorruptCheckpointError)) throw e;
    }
  }
  if (!isSavepoint) throw refuse('it has no readable savepoint _metadata and its name is not savepoint-<jobId>-<random>');
  try {
    await client.delete(snapshot.bucket, join(snapshot.dirKey, METADATA_FILE_NAME));
    await Promise.all(keys.map((k) => client.delete(snapshot.bucket, k)));
  } catch (e) {
    throw s3StorageError(e, snapshot.uri, 'savepoint directory');
  }
}
