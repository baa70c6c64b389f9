import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chooseCheckpointToRestore, describeFallbacks } from './choose-checkpoint-to-restore.js';
import type { CheckpointRef, CheckpointStorage, CompletedCheckpointHandle } from './checkpoint-storage.js';
import { createSavepointLocation } from './savepoint-directory.js';
import type { CheckpointMetadata, FileStateHandle, StateHandle } from './snapshot-format.js';
import { seededBytes, TEST_JOB_ID, writeSampleSnapshot, type SampleSnapshot, installFastByteEquality } from './snapshot-test-data.js';
import { CheckpointStorageError, CorruptCheckpointError } from './storage-errors.js';

/**
 * The behaviour every CheckpointStorage shares. checkpoint-storage.test.ts runs it against
 * each implementation; a new implementation adds one `checkpointStorageConformance` call.
 */

export interface CheckpointStorageUnderTest {
  readonly name: string;
  /** True when chunks at or above the inline threshold go to files that can be damaged. */
  readonly storesStateInFiles: boolean;
  /** A storage over fresh, empty backing (a new temp dir or map). */
  setUp(options: { jobId: string; dataInlineThresholdBytes: number }): Promise<StorageFixture>;
}

export interface StorageFixture {
  readonly storage: CheckpointStorage;
  /** A new storage instance over the same backing, as after a restart of the coordinator. */
  reopen(): Promise<CheckpointStorage>;
  /** What CorruptCheckpointError names as the `_metadata` of checkpoint N. */
  metadataFile(checkpointId: number): string;
  /** Flips every bit of one byte of checkpoint N's stored `_metadata`; a negative offset counts from the end. */
  damageMetadata(checkpointId: number, offset: number): Promise<void>;
  /** Cuts checkpoint N's stored `_metadata` to its first `lengthBytes` bytes. */
  truncateMetadata(checkpointId: number, lengthBytes: number): Promise<void>;
  /** As damageMetadata, for a state file; returns the file's path. Only when storesStateInFiles. */
  damageStateFile?(handle: FileStateHandle, checkpoint: CheckpointRef, offset: number): Promise<string>;
  /** As truncateMetadata, for a state file; returns the file's path. Only when storesStateInFiles. */
  truncateStateFile?(handle: FileStateHandle, checkpoint: CheckpointRef, lengthBytes: number): Promise<string>;
  tearDown(): Promise<void>;
}

installFastByteEquality();

const INLINE_THRESHOLD_BYTES = 1024;

export function checkpointStorageConformance(impl: CheckpointStorageUnderTest): void {
  describe(`CheckpointStorage conformance: ${impl.name}`, () => {
    let fx: StorageFixture;
    let storage: CheckpointStorage;
    const temps: string[] = [];

    beforeEach(async () => {
      fx = await impl.setUp({ jobId: TEST_JOB_ID, dataInlineThresholdBytes: INLINE_THRESHOLD_BYTES });
      storage = fx.storage;
    });
    afterEach(async () => {
      await fx.tearDown();
      for (const t of temps.splice(0)) await rm(t, { recursive: true, force: true });
    });

    async function complete(checkpointId: number, s: CheckpointStorage = storage): Promise<{ handle: CompletedCheckpointHandle; sample: SampleSnapshot }> {
      const location = await s.createCheckpointLocation(checkpointId);
      const sample = await writeSampleSnapshot(location, { jobId: s.jobId, checkpointId });
      const handle = await s.finalizeCheckpoint(sample.metadata);
      return { handle, sample };
    }

    async function expectReadsBack(s: CheckpointStorage, handle: CompletedCheckpointHandle, metadata: CheckpointMetadata, written: SampleSnapshot['written']): Promise<void> {
      const read = await s.readMetadata(handle.pointer);
      expect(read).toEqual(metadata);
      for (const w of written) expect(await s.readStateHandle(w.handle, handle)).toEqual(w.bytes);
    }

    it('round-trips metadata and every state handle', async () => {
      const { handle, sample } = await complete(1);
      expect(handle).toMatchObject({ jobId: TEST_JOB_ID, checkpointId: 1 });
      await expectReadsBack(storage, handle, sample.metadata, sample.written);
    });

    it('inlines state below the data-inline threshold and only there', async () => {
      const location = await storage.createCheckpointLocation(1);
      for (const size of [0, 1, INLINE_THRESHOLD_BYTES - 1, INLINE_THRESHOLD_BYTES, 20 * 1024, 100 * 1024]) {
        const bytes = seededBytes(size, size + 1);
        const h = await location.writeStateFile(bytes);
        expect(h.kind, `${size} bytes`).toBe(size < storage.dataInlineThresholdBytes ? 'inline' : 'file');
        if (h.kind === 'file') {
          expect(h.sizeBytes).toBe(size);
          expect(h.scope).toBe('exclusive');
        } else {
          expect(h.bytes).toEqual(bytes);
        }
      }
      if (impl.storesStateInFiles) expect(storage.dataInlineThresholdBytes).toBe(INLINE_THRESHOLD_BYTES);
    });

    it('lists completed checkpoints newest first, by number', async () => {
      for (const id of [1, 2, 9, 10]) await complete(id);
      await storage.createCheckpointLocation(11); // in progress: not listed
      expect((await storage.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([10, 9, 2, 1]);
      const reopened = await fx.reopen();
      expect((await reopened.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([10, 9, 2, 1]);
    });

    it('keeps completed checkpoints readable from a reopened storage', async () => {
      const { handle, sample } = await complete(3);
      const reopened = await fx.reopen();
      const [listed] = await reopened.listRetainedCheckpoints();
      expect(listed).toEqual(handle);
      await expectReadsBack(reopened, listed!, sample.metadata, sample.written);
    });

    it('does not list a checkpoint whose _metadata was never written', async () => {
      await complete(1);
      const location = await storage.createCheckpointLocation(2);
      await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 2 });
      expect((await storage.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([1]);
      expect((await (await fx.reopen()).listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([1]);
    });

    it('discards a checkpoint, idempotently', async () => {
      await complete(1);
      const { handle } = await complete(2);
      await storage.discardCheckpoint(2);
      expect((await storage.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([1]);
      await expect(storage.readMetadata(handle.pointer)).rejects.toBeInstanceOf(CheckpointStorageError);
      await storage.discardCheckpoint(2);
      await expect(storage.discardCheckpoint(3)).resolves.toBeUndefined();
    });

    it('shared files (incremental checkpoints): outlive the checkpoint that wrote them, go with discardSharedFiles; an aborted checkpoint removes its own', async () => {
      const sharedMetadata = (checkpointId: number, data: StateHandle): CheckpointMetadata => ({
        formatVersion: 1,
        jobId: storage.jobId,
        checkpointId,
        timestampMs: 1000 + checkpointId,
        type: 'checkpoint',
        operators: [
          {
            operatorUid: 'op',
            parallelism: 1,
            maxParallelism: 128,
            subtasks: [
              {
                subtaskIndex: 0,
                keyedState: [{ kind: 'key-groups', keyGroupRange: { startKeyGroup: 0, endKeyGroup: 127 }, keyGroupOffsetsBytes: new Array<number>(128).fill(0), data }],
                operatorState: undefined,
                sourceSplits: undefined,
                inputChannelState: undefined,
                outputChannelState: undefined,
              },
            ],
          },
        ],
      });
      const bytes = seededBytes(64 * 1024, 7);
      const location = await storage.createCheckpointLocation(1);
      const h = await location.writeStateFile(bytes, 'shared');
      if (h.kind === 'inline') {
        expect(impl.storesStateInFiles).toBe(false);
        return;
      }
      expect(h.scope).toBe('shared');
      const first = await storage.finalizeCheckpoint(sharedMetadata(1, h));
      // Checkpoint 2 references the same file; checkpoint 1 is discarded: the file stays readable.
      await storage.createCheckpointLocation(2);
      const second = await storage.finalizeCheckpoint(sharedMetadata(2, h));
      await storage.discardCheckpoint(1);
      expect(await storage.readStateHandle(h, second)).toEqual(bytes);
      await storage.discardSharedFiles([h.path]);
      await expect(storage.readStateHandle(h, second)).rejects.toThrow();
      await storage.discardSharedFiles([h.path]); // idempotent
      expect(first.checkpointId).toBe(1);
      // An aborted checkpoint takes its shared files with it.
      const aborted = await storage.createCheckpointLocation(3);
      const orphan = await aborted.writeStateFile(bytes, 'shared');
      await storage.abortCheckpoint(3);
      await expect(storage.readStateHandle(orphan, second)).rejects.toThrow();
    });

    it('aborts a checkpoint: nothing is listed, later writes and finalize fail', async () => {
      const location = await storage.createCheckpointLocation(1);
      const sample = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 1 });
      await storage.abortCheckpoint(1);
      await expect(location.writeStateFile(seededBytes(10, 1))).rejects.toThrow(/checkpoint 1 is aborted/);
      await expect(storage.finalizeCheckpoint(sample.metadata)).rejects.toThrow(/cannot finalize checkpoint 1/);
      await storage.abortCheckpoint(1);
      expect(await storage.listRetainedCheckpoints()).toEqual([]);
      await complete(2);
      await expect(storage.abortCheckpoint(2)).rejects.toThrow(/complete; discard it/);
    });

    it('asserts the protocol: increasing ids, own job, one finalize per location, valid metadata', async () => {
      await storage.createCheckpointLocation(5);
      await expect(storage.createCheckpointLocation(5)).rejects.toThrow(/strictly increase/);
      await expect(storage.createCheckpointLocation(4)).rejects.toThrow(/strictly increase/);
      await expect(storage.createCheckpointLocation(0)).rejects.toThrow(/positive integer/);

      const location = await storage.createCheckpointLocation(6);
      const { metadata } = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 6 });
      await expect(storage.finalizeCheckpoint({ ...metadata, jobId: 'ffffffffffffffffffffffffffffffff' })).rejects.toThrow(/of job ffff.* handed to the storage of job 0123/);
      await expect(storage.finalizeCheckpoint({ ...metadata, checkpointId: 7 })).rejects.toThrow(/no location/);
      const op = metadata.operators[1]!;
      const st = op.subtasks[0]!;
      const broken: CheckpointMetadata = {
        ...metadata,
        operators: [metadata.operators[0]!, { ...op, subtasks: [{ ...st, keyedState: [{ ...st.keyedState[0]!, keyGroupOffsetsBytes: [0, 1] }] }, op.subtasks[1]!] }],
      };
      await expect(storage.finalizeCheckpoint(broken)).rejects.toThrow(/refusing to write checkpoint 6: .*keyGroupOffsetsBytes has 2 entries/);
      expect(await storage.listRetainedCheckpoints()).toEqual([]);
      await storage.finalizeCheckpoint(metadata);
      await expect(storage.finalizeCheckpoint(metadata)).rejects.toThrow(/cannot finalize checkpoint 6/);
    });

    it('detects one damaged byte of _metadata, naming the file and the checkpoint', async () => {
      const { handle } = await complete(12);
      await fx.damageMetadata(12, -5);
      const error = await storage.readMetadata(handle.pointer).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptCheckpointError);
      const e = error as CorruptCheckpointError;
      expect(e.checkpointId).toBe(12);
      expect(e.file).toBe(fx.metadataFile(12));
      expect(e.message).toMatch(/^checkpoint 12: file .* is corrupt \(checksum mismatch: expected [0-9a-f]{8}, found [0-9a-f]{8}\)$/);
      expect(e.message).toContain(fx.metadataFile(12));
    });

    it('detects damage to the header of _metadata', async () => {
      const { handle } = await complete(1);
      await fx.damageMetadata(1, 0);
      await expect(storage.readMetadata(handle.pointer)).rejects.toThrow(/checkpoint 1: file .* is corrupt \(bad magic/);
      const { handle: h2 } = await complete(2);
      await fx.damageMetadata(2, 9); // payload length field
      await expect(storage.readMetadata(h2.pointer)).rejects.toThrow(/checkpoint 2: file .* is corrupt \(header checksum mismatch/);
    });

    it('detects a truncated _metadata', async () => {
      const { handle } = await complete(1);
      await fx.truncateMetadata(1, 100);
      await expect(storage.readMetadata(handle.pointer)).rejects.toThrow(/checkpoint 1: file .* is corrupt \(truncated: header declares \d+ payload bytes, file has 76\)/);
      const { handle: h2 } = await complete(2);
      await fx.truncateMetadata(2, 10);
      await expect(storage.readMetadata(h2.pointer)).rejects.toThrow(/checkpoint 2: .*truncated: 10 bytes, shorter than the 24-byte header/);
    });

    // jobmanager storage keeps state inline in _metadata: the _metadata tests above cover it.
    if (impl.storesStateInFiles) it('detects one damaged byte or a truncation of a state file', async () => {
      const { handle, sample } = await complete(7);
      const files = sample.written.map((w) => w.handle).filter((h): h is FileStateHandle => h.kind === 'file');
      expect(files.length).toBeGreaterThanOrEqual(2);
      const damaged = await fx.damageStateFile!(files[0]!, handle, -1);
      await expect(storage.readStateHandle(files[0]!, handle)).rejects.toThrow(
        new RegExp(`^checkpoint 7: file ${escape(damaged)} is corrupt \\(checksum mismatch: expected [0-9a-f]{8}, found [0-9a-f]{8}\\)$`),
      );
      const cut = await fx.truncateStateFile!(files[1]!, handle, 1000);
      const error = await storage.readStateHandle(files[1]!, handle).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptCheckpointError);
      expect((error as CorruptCheckpointError).file).toBe(cut);
      expect((error as Error).message).toMatch(/checkpoint 7: .* is corrupt \(truncated: header declares 32768 payload bytes, file has 976\)/);
      // the metadata itself is intact
      expect(await storage.readMetadata(handle.pointer)).toEqual(sample.metadata);
    });

    it('falls back to the newest readable checkpoint when the newest is corrupt', async () => {
      for (const id of [1, 2, 3]) await complete(id);
      await fx.damageMetadata(3, -1);
      const candidates = await Promise.all(
        (await storage.listRetainedCheckpoints()).map(async (c) => ({
          ...c,
          readable: await storage.readMetadata(c.pointer).then(
            () => true as const,
            (e: unknown) => e as Error,
          ),
        })),
      );
      const choice = chooseCheckpointToRestore(candidates);
      expect(choice.chosen?.checkpointId).toBe(2);
      expect(choice.skipped.map((s) => s.checkpointId)).toEqual([3]);
      expect(describeFallbacks(choice)).toEqual([expect.stringMatching(/^checkpoint 3 cannot be read \(checkpoint 3: file .* is corrupt \(checksum mismatch.*\)\), falling back to checkpoint 2$/)]);
    });

    it('reads a savepoint directory, also after it was moved', async () => {
      const parent = await mkdtemp(join(tmpdir(), 'sluice-conformance-sp-'));
      temps.push(parent);
      const location = await createSavepointLocation(join(parent, 'a'), TEST_JOB_ID, { dataInlineThresholdBytes: INLINE_THRESHOLD_BYTES });
      const sample = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 4, type: 'savepoint' });
      const done = await location.finalize(sample.metadata);
      await mkdir(join(parent, 'b'));
      const moved = join(parent, 'b', 'moved-savepoint');
      await rename(done.pointer, moved);
      await expectReadsBack(storage, { ...done, pointer: moved }, sample.metadata, sample.written);
      await expect(storage.readMetadata(join(moved, '_metadata'))).resolves.toEqual(sample.metadata);
    });

    it('names a directory without _metadata and a missing path', async () => {
      const parent = await mkdtemp(join(tmpdir(), 'sluice-conformance-'));
      temps.push(parent);
      await expect(storage.readMetadata(parent)).rejects.toThrow(`not a checkpoint or savepoint directory: ${parent} has no _metadata`);
      await expect(storage.readMetadata(join(parent, 'nope'))).rejects.toThrow(`not a checkpoint or savepoint directory: ${join(parent, 'nope')} does not exist`);
    });
  });
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
