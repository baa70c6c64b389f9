import { expect } from 'vitest';
import { keyGroupRangeForOperator } from '../state/key-group.js';
import type { CheckpointStorageLocation } from './checkpoint-storage.js';
import { METADATA_FORMAT_VERSION, type CheckpointMetadata, type KeyGroupsStateHandle, type SnapshotType, type StateHandle } from './snapshot-format.js';

/** Test data for storage tests: deterministic bytes and a snapshot of two operators. */

export const TEST_JOB_ID = '0123456789abcdef0123456789abcdef';

/** `length` bytes from a seed, the same every run. */
export function seededBytes(length: number, seed: number): Uint8Array {
  let s = seed >>> 0 || 1;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s & 0xff;
  }
  return out;
}

/** Writes keyed state of `bytesPerKeyGroup` per key group of a subtask's range, as one handle. */
export async function writeKeyedState(
  write: (bytes: Uint8Array) => Promise<StateHandle>,
  maxParallelism: number,
  parallelism: number,
  subtaskIndex: number,
  bytesPerKeyGroup: number,
  seed: number,
): Promise<{ handle: KeyGroupsStateHandle; bytes: Uint8Array }> {
  const range = keyGroupRangeForOperator(maxParallelism, parallelism, subtaskIndex);
  const count = range.endKeyGroup - range.startKeyGroup + 1;
  const bytes = seededBytes(count * bytesPerKeyGroup, seed);
  const offsets = Array.from({ length: count }, (_, i) => i * bytesPerKeyGroup);
  const data = await write(bytes);
  return { handle: { kind: 'key-groups', keyGroupRange: range, keyGroupOffsetsBytes: offsets, data }, bytes };
}

export interface SampleSnapshot {
  readonly metadata: CheckpointMetadata;
  /** Every handle written, with the bytes it must read back as. */
  readonly written: ReadonlyArray<{ handle: StateHandle; bytes: Uint8Array }>;
}

/**
 * A snapshot with a source (splits, output channel state) and a keyed operator (keyed
 * state of `keyedBytesPerKeyGroup` per key group, operator state, input channel state),
 * both with parallelism 2, written through `location`.
 */
export async function writeSampleSnapshot(
  location: Pick<CheckpointStorageLocation, 'writeStateFile'>,
  options: { jobId: string; checkpointId: number; type?: SnapshotType; keyedBytesPerKeyGroup?: number; smallBytes?: number },
): Promise<SampleSnapshot> {
  const write = (b: Uint8Array): Promise<StateHandle> => location.writeStateFile(b);
  const written: Array<{ handle: StateHandle; bytes: Uint8Array }> = [];
  const put = async (bytes: Uint8Array): Promise<StateHandle> => {
    const handle = await write(bytes);
    written.push({ handle, bytes });
    return handle;
  };
  const small = options.smallBytes ?? 100;
  const perKeyGroup = options.keyedBytesPerKeyGroup ?? 512; // 64 key groups x 512 = 32 KiB per subtask
  const seed = options.checkpointId * 1000;
  const source = {
    operatorUid: 'source',
    parallelism: 2,
    maxParallelism: 128,
    subtasks: await Promise.all(
      [0, 1].map(async (i) => ({
        subtaskIndex: i,
        keyedState: [],
        operatorState: undefined,
        sourceSplits: await put(seededBytes(small, seed + i)),
        inputChannelState: undefined,
        outputChannelState: i === 0 ? await put(seededBytes(small * 3, seed + 10 + i)) : undefined,
      })),
    ),
  };
  const keyed = {
    operatorUid: 'hot-items',
    parallelism: 2,
    maxParallelism: 128,
    subtasks: await Promise.all(
      [0, 1].map(async (i) => {
        const k = await writeKeyedState(write, 128, 2, i, perKeyGroup, seed + 20 + i);
        written.push({ handle: k.handle.data, bytes: k.bytes });
        return {
          subtaskIndex: i,
          keyedState: [k.handle],
          operatorState: await put(seededBytes(small, seed + 30 + i)),
          sourceSplits: undefined,
          inputChannelState: i === 1 ? await put(seededBytes(small * 2, seed + 40 + i)) : undefined,
          outputChannelState: undefined,
        };
      }),
    ),
  };
  const type = options.type ?? 'checkpoint';
  const metadata: CheckpointMetadata = {
    formatVersion: METADATA_FORMAT_VERSION,
    jobId: options.jobId,
    checkpointId: options.checkpointId,
    timestampMs: 1_700_000_000_000 + options.checkpointId,
    type,
    ...(type === 'savepoint' ? { savepointFormat: 'canonical' as const } : {}),
    operators: [source, keyed],
  };
  return { metadata, written };
}

/**
 * Makes `toEqual` compare byte arrays of the same class with Buffer.compare instead of
 * element by element (vitest's generic walk takes ~10 ms per 32 KiB). Call once per test file.
 */
export function installFastByteEquality(): void {
  expect.addEqualityTesters([
    (a: unknown, b: unknown): boolean | undefined => {
      if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.constructor !== b.constructor) return undefined;
      return a.length === b.length && Buffer.compare(a, b) === 0;
    },
  ]);
}
