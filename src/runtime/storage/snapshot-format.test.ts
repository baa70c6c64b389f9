import { describe, expect, it } from 'vitest';
import { keyGroupSlices } from './key-group-slices.js';
import { decodeMetadata, encodeMetadata } from './metadata-codec.js';
import { MalformedMetadataError, parseCheckpointMetadata, stateSizeBytes, type CheckpointMetadata, type StateHandle, type SubtaskSnapshot } from './snapshot-format.js';
import { seededBytes, TEST_JOB_ID, writeSampleSnapshot, installFastByteEquality } from './snapshot-test-data.js';
import { CorruptCheckpointError } from './storage-errors.js';

installFastByteEquality();

const inline = async (bytes: Uint8Array): Promise<StateHandle> => ({ kind: 'inline', bytes });
const fileHandle = (path: string, sizeBytes: number): StateHandle => ({ kind: 'file', scope: 'exclusive', path, sizeBytes, checksum: 0x1234 });

async function sample(): Promise<CheckpointMetadata> {
  return (await writeSampleSnapshot({ writeStateFile: inline }, { jobId: TEST_JOB_ID, checkpointId: 3, keyedBytesPerKeyGroup: 4 })).metadata;
}

function withSubtask(m: CheckpointMetadata, patch: Partial<SubtaskSnapshot>): CheckpointMetadata {
  const op = m.operators[1]!;
  return { ...m, operators: [m.operators[0]!, { ...op, subtasks: [{ ...op.subtasks[0]!, ...patch }, op.subtasks[1]!] }] };
}

function problem(value: unknown): string {
  try {
    parseCheckpointMetadata(value);
  } catch (e) {
    expect(e).toBeInstanceOf(MalformedMetadataError);
    return (e as MalformedMetadataError).problem;
  }
  throw new Error('accepted');
}

describe('snapshot format', () => {
  it('accepts a well-formed snapshot and returns an equal copy', async () => {
    const m = await sample();
    expect(parseCheckpointMetadata(m)).toEqual(m);
    expect(stateSizeBytes(m)).toBe(2 * 100 + 300 + 2 * 64 * 4 + 2 * 100 + 200);
  });

  it('names the first broken invariant', async () => {
    const m = await sample();
    const keyed = m.operators[1]!.subtasks[0]!.keyedState[0]!;
    expect(problem({ ...m, formatVersion: 2 })).toBe('formatVersion is 2, this Sluice reads 1 (written by a newer Sluice)');
    expect(problem({ ...m, checkpointId: 0 })).toMatch(/^checkpointId is 0, expected 1\.\./);
    expect(problem({ ...m, type: 'snapshot' })).toBe('type is "snapshot", expected "checkpoint" or "savepoint"');
    expect(problem({ ...m, savepointFormat: 'native' })).toBe('savepointFormat is set on a checkpoint');
    expect(problem({ ...m, operators: [m.operators[0], m.operators[0]] })).toBe('operators[1].operatorUid "source" appears twice');
    expect(problem({ ...m, operators: [{ ...m.operators[0]!, parallelism: 200 }] })).toMatch(/^operators\[0\]\.parallelism is 200, expected 1\.\.128$/);
    expect(problem({ ...m, operators: [{ ...m.operators[0]!, subtasks: [m.operators[0]!.subtasks[1], m.operators[0]!.subtasks[0]] }] })).toMatch(
      /^operators\[0\]\.subtasks\[1\]\.subtaskIndex is 0, after subtask 1; subtasks are listed once each, in increasing subtaskIndex$/,
    );
    expect(problem(withSubtask(m, { keyedState: [{ ...keyed, keyGroupRange: { startKeyGroup: 60, endKeyGroup: 70 } }] }))).toBe(
      'operators[1].subtasks[0].keyedState[0].keyGroupRange [60, 70] is outside the subtask\'s key groups [0, 63]',
    );
    expect(problem(withSubtask(m, { keyedState: [{ ...keyed, keyGroupOffsetsBytes: keyed.keyGroupOffsetsBytes.slice(1) }] }))).toBe(
      'operators[1].subtasks[0].keyedState[0].keyGroupOffsetsBytes has 63 entries, the range [0, 63] has 64 key groups',
    );
    const backwards = [...keyed.keyGroupOffsetsBytes];
    backwards[5] = 1;
    expect(problem(withSubtask(m, { keyedState: [{ ...keyed, keyGroupOffsetsBytes: backwards }] }))).toMatch(/keyGroupOffsetsBytes\[5\] is 1, expected 16\.\.256$/);
    const half = { ...keyed, keyGroupRange: { startKeyGroup: 0, endKeyGroup: 31 }, keyGroupOffsetsBytes: keyed.keyGroupOffsetsBytes.slice(0, 32) };
    expect(problem(withSubtask(m, { keyedState: [half, half] }))).toBe('operators[1].subtasks[0].keyedState has overlapping key-group ranges (key group 0 twice)');
    expect(problem(withSubtask(m, { operatorState: fileHandle('../escape', 1) }))).toBe(
      'operators[1].subtasks[0].operatorState.path "../escape" is not a relative path inside the snapshot directory',
    );
    expect(problem(withSubtask(m, { operatorState: fileHandle('/abs', 1) }))).toMatch(/is not a relative path/);
    const shared: StateHandle = { kind: 'file', scope: 'shared', path: 'abc', sizeBytes: 1, checksum: 1 };
    expect(parseCheckpointMetadata(withSubtask(m, { operatorState: shared })).operators[1]!.subtasks[0]!.operatorState).toEqual(shared);
    expect(problem({ ...withSubtask(m, { operatorState: shared }), type: 'savepoint' })).toBe(
      "operators[1].subtasks[0].operatorState is in the job's shared directory, but a savepoint must be self-contained",
    );
  });

  it('encodes and decodes _metadata, keeping bytes and absent handles', async () => {
    const m = await sample();
    const decoded = decodeMetadata(encodeMetadata(m), { file: 'f', checkpointId: 3 });
    expect(decoded).toEqual(m);
    const bytes = decoded.operators[0]!.subtasks[0]!.sourceSplits;
    expect(bytes?.kind === 'inline' && bytes.bytes.constructor).toBe(Uint8Array);
    expect(decoded.operators[0]!.subtasks[1]!.outputChannelState).toBeUndefined();
  });

  it('refuses to encode malformed metadata and reports malformed decoded metadata as corrupt', async () => {
    const m = await sample();
    expect(() => encodeMetadata({ ...m, timestampMs: -1 })).toThrow(/^refusing to write checkpoint 3: malformed checkpoint metadata: timestampMs is -1/);
    const { encode } = await import('./checksummed-file.js');
    const { Packr } = await import('msgpackr');
    const garbage = encode(new Packr({ useRecords: false }).pack({ formatVersion: 1, jobId: 'j' }), 'metadata');
    expect(() => decodeMetadata(garbage, { file: '/c/chk-3/_metadata', checkpointId: 3 })).toThrow(
      new CorruptCheckpointError('/c/chk-3/_metadata', 3, 'malformed checkpoint metadata: checkpointId is missing, expected an integer'),
    );
  });

  it('gives the byte range of each key group for a rescaled restore', () => {
    const data = seededBytes(10, 1);
    const handle = { kind: 'key-groups' as const, keyGroupRange: { startKeyGroup: 4, endKeyGroup: 7 }, keyGroupOffsetsBytes: [0, 3, 3, 6], data: { kind: 'inline' as const, bytes: data } };
    expect(keyGroupSlices(handle, { startKeyGroup: 5, endKeyGroup: 20 })).toEqual([
      { keyGroup: 5, startByte: 3, endByte: 3 },
      { keyGroup: 6, startByte: 3, endByte: 6 },
      { keyGroup: 7, startByte: 6, endByte: 10 },
    ]);
    expect(keyGroupSlices(handle, { startKeyGroup: 0, endKeyGroup: 4 })).toEqual([{ keyGroup: 4, startByte: 0, endByte: 3 }]);
    expect(keyGroupSlices(handle, { startKeyGroup: 8, endKeyGroup: 9 })).toEqual([]);
  });
});
