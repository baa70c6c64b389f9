import { join } from 'node:path';

/**
 * The on-disk layout, as in Flink, as pure functions of names:
 *
 *   <checkpointsDir>/<jobId>/chk-<N>/_metadata         completed checkpoint N
 *   <checkpointsDir>/<jobId>/chk-<N>/<uuid>            its state files (scope exclusive)
 *   <checkpointsDir>/<jobId>/shared/                   files shared by checkpoints (incremental)
 *   <checkpointsDir>/<jobId>/taskowned/                files owned by tasks: full snapshots TaskManagers spilled (sluice-snapshot-<16 hex>.spill)
 *   <savepointDir>/savepoint-<6 hex of jobId>-<12 hex>/_metadata + <uuid> files
 *
 * Temp files are `<final name>.<16 hex>.tmp` in the same directory, renamed into place.
 */

export const METADATA_FILE_NAME = '_metadata';
export const SHARED_DIR_NAME = 'shared';
export const TASK_OWNED_DIR_NAME = 'taskowned';
const CHECKPOINT_DIR_PREFIX = 'chk-';

const CHECKPOINT_DIR_PATTERN = /^chk-([1-9][0-9]*)$/;
const SAVEPOINT_DIR_PATTERN = /^savepoint-[0-9a-f]{6}-[0-9a-f]{12}$/;
const STATE_FILE_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TEMP_SUFFIX_PATTERN = /\.[0-9a-f]{16}\.tmp$/;
/** A job id is used as a directory name: letters, digits, '-' and '_' (Flink's are 32 hex). */
const JOB_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export function checkJobId(jobId: string): void {
  if (!JOB_ID_PATTERN.test(jobId)) {
    throw new Error(`job id ${JSON.stringify(jobId)} cannot name a directory; expected letters, digits, '-' or '_' (a 32-hex Flink JobID)`);
  }
}

export function checkCheckpointId(checkpointId: number): void {
  if (!Number.isSafeInteger(checkpointId) || checkpointId < 1) {
    throw new Error(`checkpoint id must be a positive integer, got ${checkpointId}`);
  }
}

export function jobDir(checkpointsDir: string, jobId: string): string {
  return join(checkpointsDir, jobId);
}

export function checkpointDirName(checkpointId: number): string {
  return `${CHECKPOINT_DIR_PREFIX}${checkpointId}`;
}

/** The id of a `chk-N` directory name, or undefined for any other name. */
export function parseCheckpointDirName(name: string): number | undefined {
  const m = CHECKPOINT_DIR_PATTERN.exec(name);
  if (m === null) return undefined;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}

export function savepointDirName(jobId: string, randomHex12: string): string {
  if (!/^[0-9a-f]{12}$/.test(randomHex12)) throw new Error(`savepoint suffix must be 12 hex digits, got ${randomHex12}`);
  return `savepoint-${shortJobId(jobId)}-${randomHex12}`;
}

/** First 6 characters of the job id in lowercase, padded with 0 for short ids. */
export function shortJobId(jobId: string): string {
  const hex = jobId.toLowerCase().replace(/[^0-9a-f]/g, '');
  return hex.slice(0, 6).padEnd(6, '0');
}

export function isSavepointDirName(name: string): boolean {
  return SAVEPOINT_DIR_PATTERN.test(name);
}

export function isStateFileName(name: string): boolean {
  return STATE_FILE_PATTERN.test(name);
}

export function tempFileName(finalName: string, randomHex16: string): string {
  return `${finalName}.${randomHex16}.tmp`;
}

/** A name Sluice writes into a snapshot directory: _metadata, a state file, or a temp file of either. */
export function isSnapshotFileName(name: string): boolean {
  const base = name.replace(TEMP_SUFFIX_PATTERN, '');
  return base === METADATA_FILE_NAME || isStateFileName(base);
}

/** A state file name from 16 random bytes (UUID version 4 layout). */
export function stateFileName(random16: Uint8Array): string {
  if (random16.length !== 16) throw new Error(`a state file name needs 16 random bytes, got ${random16.length}`);
  const b = Uint8Array.from(random16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const SPILL_FILE_PATTERN = /^sluice-snapshot-[0-9a-f]{16}\.spill$/;

/** The name of a spill file (a full keyed snapshot spilled before it is written: spill-file-writer.ts) from 8 random bytes. */
export function spillFileName(random8: Uint8Array): string {
  if (random8.length !== 8) throw new Error(`a spill file name needs 8 random bytes, got ${random8.length}`);
  return `sluice-snapshot-${Array.from(random8, (x) => x.toString(16).padStart(2, '0')).join('')}.spill`;
}

export function isSpillFileName(name: string): boolean {
  return SPILL_FILE_PATTERN.test(name);
}
