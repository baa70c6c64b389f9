import type { Configuration } from '../../config/configuration.js';
import type { CheckpointStorage, CheckpointStorageKind } from './checkpoint-storage.js';
import { FilesystemCheckpointStorage } from './filesystem-checkpoint-storage.js';
import { MemoryCheckpointStorage } from './memory-checkpoint-storage.js';
import type { RandomBytes } from './random-bytes.js';

/**
 * execution.checkpointing.storage: unset means jobmanager without a directory and
 * filesystem with one (Flink's default). Pure.
 */
export function chooseCheckpointStorageKind(configured: CheckpointStorageKind | undefined, checkpointsDir: string | undefined): CheckpointStorageKind {
  if (configured === 'filesystem' && checkpointsDir === undefined) {
    throw new Error(`execution.checkpointing.storage is filesystem, but execution.checkpointing.dir is not set; set it to the directory for checkpoints`);
  }
  return configured ?? (checkpointsDir === undefined ? 'jobmanager' : 'filesystem');
}

export interface CheckpointStorageOptions {
  readonly jobId: string;
  /** execution.checkpointing.storage */
  readonly storage?: CheckpointStorageKind;
  /** execution.checkpointing.dir; jobmanager storage does not use it. */
  readonly checkpointsDir?: string;
  /** execution.checkpointing.data-inline-threshold (filesystem storage) */
  readonly dataInlineThresholdBytes?: number;
  readonly random?: RandomBytes;
  /** For an s3:// checkpoints dir: the s3.* options (the AWS_* variables fill in what is unset). */
  readonly config?: Configuration;
}

export async function createCheckpointStorage(options: CheckpointStorageOptions): Promise<CheckpointStorage> {
  const kind = chooseCheckpointStorageKind(options.storage, options.checkpointsDir);
  if (kind === 'jobmanager') return new MemoryCheckpointStorage({ jobId: options.jobId });
  if (/^s3[ap]?:\/\//i.test(options.checkpointsDir!)) {
    // Loaded only when used: local checkpoint directories need no S3 client.
    const { S3CheckpointStorage, s3ClientFrom } = await import('./s3-checkpoint-storage.js');
    return S3CheckpointStorage.open({
      jobId: options.jobId,
      checkpointsDir: options.checkpointsDir!,
      client: s3ClientFrom(options.config),
      ...(options.dataInlineThresholdBytes === undefined ? {} : { dataInlineThresholdBytes: options.dataInlineThresholdBytes }),
      ...(options.random === undefined ? {} : { random: options.random }),
    });
  }
  return FilesystemCheckpointStorage.open({
    jobId: options.jobId,
    checkpointsDir: options.checkpointsDir!,
    ...(options.dataInlineThresholdBytes === undefined ? {} : { dataInlineThresholdBytes: options.dataInlineThresholdBytes }),
    ...(options.random === undefined ? {} : { random: options.random }),
  });
}
