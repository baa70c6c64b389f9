import { keyGroupRangeForOperator, UPPER_BOUND_MAX_PARALLELISM, type KeyGroupRange } from '../state/key-group.js';

/**
 * What a completed checkpoint or savepoint contains, independent of where it is stored.
 * `parseCheckpointMetadata` checks every invariant; storage runs it on write (a violation
 * is a bug) and on read (a violation is corruption).
 *
 * Extension points: `StateHandle` and `KeyedStateHandle` are closed unions on `kind`.
 * Incremental checkpoints and the state changelog use key-group handles in chains (a full
 * handle, then deltas with `baseCheckpointId`) whose files have `scope: 'shared'`
 * (reference-counted across checkpoints). Bump METADATA_FORMAT_VERSION when a field changes
 * meaning.
 */

export const METADATA_FORMAT_VERSION = 1;

export type SnapshotType = 'checkpoint' | 'savepoint';
export type SavepointFormat = 'canonical' | 'native';

export interface CheckpointMetadata {
  readonly formatVersion: number;
  readonly jobId: string;
  readonly checkpointId: number;
  readonly timestampMs: number;
  readonly type: SnapshotType;
  /** Only for savepoints; absent means canonical. */
  readonly savepointFormat?: SavepointFormat;
  readonly operators: readonly OperatorSnapshot[];
}

export interface OperatorSnapshot {
  /** From `uid()`; unique within the snapshot. */
  readonly operatorUid: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  /** Subtasks that have state, in increasing subtaskIndex; a subtask without state may be absent. */
  readonly subtasks: readonly SubtaskSnapshot[];
  /**
   * A source with on-request split assignment: its split enumerator's state (msgpack of the
   * splits not handed out yet), as Flink's OperatorState.coordinatorState. Absent otherwise.
   */
  readonly coordinatorState?: StateHandle;
  /** A source's `splitKind` (what its subtasks' splits are); absent for other operators, sources without one, and older snapshots. */
  readonly splitKind?: string;
}

export interface SubtaskSnapshot {
  readonly subtaskIndex: number;
  /** Within the key-group range this subtask owned; ranges do not overlap. */
  readonly keyedState: readonly KeyedStateHandle[];
  readonly operatorState: StateHandle | undefined;
  readonly sourceSplits: StateHandle | undefined;
  /** Unaligned checkpoints: in-flight data of input channels. */
  readonly inputChannelState: StateHandle | undefined;
  /** Unaligned checkpoints: in-flight data of output channels. */
  readonly outputChannelState: StateHandle | undefined;
}

/** Bytes of state: kept in `_metadata` (inline) or in a file beside it. */
export type StateHandle = InlineStateHandle | FileStateHandle;

export interface InlineStateHandle {
  readonly kind: 'inline';
  readonly bytes: Uint8Array;
}

/**
 * Where a file is resolved from: 'exclusive' = the checkpoint's own directory (chk-N/ or
 * the savepoint directory), owned by that one snapshot; 'shared' = the job's shared/
 * directory, for files that several checkpoints reference (incremental; not in savepoints).
 */
export type FileScope = 'exclusive' | 'shared';

export interface FileStateHandle {
  readonly kind: 'file';
  readonly scope: FileScope;
  /** Relative to the directory of `scope`; never absolute, never with `..`. */
  readonly path: string;
  /** Payload size (the state bytes), without the file header. */
  readonly sizeBytes: number;
  /** CRC-32C of the payload, the same value as in the file header. */
  readonly checksum: number;
}

/**
 * Keyed state of a contiguous key-group range, serialized key group after key group into
 * `data`; `keyGroupOffsetsBytes[i]` is where key group `range.start + i` begins, so a
 * rescaled restore reads only the key groups it now owns (see key-group-slices.ts).
 */
export interface KeyGroupsStateHandle {
  readonly kind: 'key-groups';
  readonly keyGroupRange: KeyGroupRange;
  readonly keyGroupOffsetsBytes: readonly number[];
  readonly data: StateHandle;
  /**
   * Set on the delta of an incremental checkpoint: the changes since the state of checkpoint
   * `baseCheckpointId`, applied on top of the handles before it in `keyedState` (a chain: a
   * full handle, then deltas, in order; see keyed-state-delta.ts).
   */
  readonly baseCheckpointId?: number;
}

export type KeyedStateHandle = KeyGroupsStateHandle;

/** Metadata that breaks an invariant; `problem` names the field, e.g. "operators[0].parallelism is 0". */
export class MalformedMetadataError extends Error {
  override readonly name = 'MalformedMetadataError';
  constructor(readonly problem: string) {
    super(`malformed checkpoint metadata: ${problem}`);
  }
}

/** The size of a handle's state bytes. */
export function stateHandleSizeBytes(h: StateHandle): number {
  return h.kind === 'inline' ? h.bytes.length : h.sizeBytes;
}

/** Every state handle of a snapshot, keyed state data included. */
export function* stateHandlesOf(metadata: CheckpointMetadata): Generator<StateHandle> {
  for (const op of metadata.operators) {
    if (op.coordinatorState !== undefined) yield op.coordinatorState;
    for (const st of op.subtasks) yield* subtaskStateHandles(st);
  }
}

/** The state handles of one operator's subtask: keyed state (a chain of handles when incremental), then the rest. */
export function* subtaskStateHandles(st: SubtaskSnapshot): Generator<StateHandle> {
  for (const k of st.keyedState) yield k.data;
  yield* unkeyedStateHandles(st);
}

/** The handles of a subtask's operator state, source splits and in-flight data: written whole by every checkpoint. */
export function* unkeyedStateHandles(st: SubtaskSnapshot): Generator<StateHandle> {
  for (const h of [st.operatorState, st.sourceSplits, st.inputChannelState, st.outputChannelState]) {
    if (h !== undefined) yield h;
  }
}

/** Total state size of a snapshot (REST `state_size`). */
export function stateSizeBytes(metadata: CheckpointMetadata): number {
  let total = 0;
  for (const h of stateHandlesOf(metadata)) total += stateHandleSizeBytes(h);
  return total;
}

// ---- validation --------------------------------------------------------------------

function fail(problem: string): never {
  throw new MalformedMetadataError(problem);
}

function record(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Uint8Array) fail(`${path} is not an object`);
  return v as Record<string, unknown>;
}

function array(v: unknown, path: string): readonly unknown[] {
  if (!Array.isArray(v)) fail(`${path} is not an array`);
  return v;
}

function integer(v: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(`${path} is ${show(v)}, expected an integer`);
  if (v < min || v > max) fail(`${path} is ${v}, expected ${min}..${max}`);
  return v;
}

function nonEmptyString(v: unknown, path: string): string {
  if (typeof v !== 'string' || v.length === 0) fail(`${path} is ${show(v)}, expected a non-empty string`);
  return v;
}

function show(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : v instanceof Uint8Array ? 'bytes' : 'an object';
  return String(v);
}

/** A relative path inside a directory: no absolute path, no `..`, no backslash, not `_metadata`. */
export function isSafeRelativePath(p: string): boolean {
  if (p.length === 0 || p.startsWith('/') || p.includes('\\') || p.includes('\0')) return false;
  const parts = p.split('/');
  return parts.every((s) => s !== '' && s !== '.' && s !== '..') && p !== '_metadata';
}

function parseStateHandle(v: unknown, path: string, type: SnapshotType): StateHandle {
  const o = record(v, path);
  switch (o['kind']) {
    case 'inline': {
      const bytes = o['bytes'];
      if (!(bytes instanceof Uint8Array)) fail(`${path}.bytes is ${show(bytes)}, expected bytes`);
      // A plain Uint8Array copy: decoders hand out Buffers that view a larger buffer.
      return { kind: 'inline', bytes: new Uint8Array(bytes) };
    }
    case 'file': {
      const scope = o['scope'];
      if (scope !== 'exclusive' && scope !== 'shared') fail(`${path}.scope is ${show(scope)}, expected "exclusive" or "shared"`);
      if (scope === 'shared' && type === 'savepoint') fail(`${path} is in the job's shared directory, but a savepoint must be self-contained`);
      const p = nonEmptyString(o['path'], `${path}.path`);
      if (!isSafeRelativePath(p)) fail(`${path}.path ${show(p)} is not a relative path inside the snapshot directory`);
      return {
        kind: 'file',
        scope,
        path: p,
        sizeBytes: integer(o['sizeBytes'], `${path}.sizeBytes`, 0),
        checksum: integer(o['checksum'], `${path}.checksum`, 0, 0xffffffff),
      };
    }
    default:
      return fail(`${path}.kind is ${show(o['kind'])}, expected "inline" or "file"`);
  }
}

function parseOptionalHandle(v: unknown, path: string, type: SnapshotType): StateHandle | undefined {
  return v === undefined || v === null ? undefined : parseStateHandle(v, path, type);
}

function parseKeyedHandle(v: unknown, path: string, type: SnapshotType, owned: KeyGroupRange): KeyedStateHandle {
  const o = record(v, path);
  if (o['kind'] !== 'key-groups') fail(`${path}.kind is ${show(o['kind'])}, expected "key-groups"`);
  const r = record(o['keyGroupRange'], `${path}.keyGroupRange`);
  const start = integer(r['startKeyGroup'], `${path}.keyGroupRange.startKeyGroup`, 0);
  const end = integer(r['endKeyGroup'], `${path}.keyGroupRange.endKeyGroup`, start);
  if (start < owned.startKeyGroup || end > owned.endKeyGroup) {
    fail(`${path}.keyGroupRange [${start}, ${end}] is outside the subtask's key groups [${owned.startKeyGroup}, ${owned.endKeyGroup}]`);
  }
  const data = parseStateHandle(o['data'], `${path}.data`, type);
  const dataSizeBytes = stateHandleSizeBytes(data);
  const offsetsRaw = array(o['keyGroupOffsetsBytes'], `${path}.keyGroupOffsetsBytes`);
  if (offsetsRaw.length !== end - start + 1) {
    fail(`${path}.keyGroupOffsetsBytes has ${offsetsRaw.length} entries, the range [${start}, ${end}] has ${end - start + 1} key groups`);
  }
  const offsets: number[] = [];
  let previous = 0;
  offsetsRaw.forEach((x, i) => {
    const off = integer(x, `${path}.keyGroupOffsetsBytes[${i}]`, previous, dataSizeBytes);
    offsets.push(off);
    previous = off;
  });
  const base = o['baseCheckpointId'];
  if (base === undefined) return { kind: 'key-groups', keyGroupRange: { startKeyGroup: start, endKeyGroup: end }, keyGroupOffsetsBytes: offsets, data };
  if (type === 'savepoint') fail(`${path} is a delta of an incremental checkpoint, but a savepoint must be self-contained`);
  const baseCheckpointId = integer(base, `${path}.baseCheckpointId`, 1);
  return { kind: 'key-groups', keyGroupRange: { startKeyGroup: start, endKeyGroup: end }, keyGroupOffsetsBytes: offsets, data, baseCheckpointId };
}

function parseSubtask(v: unknown, path: string, type: SnapshotType, parallelism: number, maxParallelism: number, minIndex: number): SubtaskSnapshot {
  const o = record(v, path);
  const subtaskIndex = integer(o['subtaskIndex'], `${path}.subtaskIndex`, 0, parallelism - 1);
  if (subtaskIndex < minIndex) fail(`${path}.subtaskIndex is ${subtaskIndex}, after subtask ${minIndex - 1}; subtasks are listed once each, in increasing subtaskIndex`);
  const owned = keyGroupRangeForOperator(maxParallelism, parallelism, subtaskIndex);
  const keyedState = array(o['keyedState'], `${path}.keyedState`).map((k, i) => parseKeyedHandle(k, `${path}.keyedState[${i}]`, type, owned));
  // Full handles cover disjoint ranges; a delta applies to key groups a handle before it covers.
  keyedState.forEach((k, i) => {
    if (k.baseCheckpointId === undefined) return;
    const { startKeyGroup: s, endKeyGroup: e } = k.keyGroupRange;
    for (let kg = s; kg <= e; kg++) {
      if (!keyedState.slice(0, i).some((b) => b.keyGroupRange.startKeyGroup <= kg && kg <= b.keyGroupRange.endKeyGroup)) {
        fail(`${path}.keyedState[${i}] is a delta for key group ${kg}, which no handle before it holds`);
      }
    }
  });
  const sorted = keyedState.filter((k) => k.baseCheckpointId === undefined).sort((a, b) => a.keyGroupRange.startKeyGroup - b.keyGroupRange.startKeyGroup);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.keyGroupRange.startKeyGroup <= sorted[i - 1]!.keyGroupRange.endKeyGroup) {
      fail(`${path}.keyedState has overlapping key-group ranges (key group ${sorted[i]!.keyGroupRange.startKeyGroup} twice)`);
    }
  }
  return {
    subtaskIndex,
    keyedState,
    operatorState: parseOptionalHandle(o['operatorState'], `${path}.operatorState`, type),
    sourceSplits: parseOptionalHandle(o['sourceSplits'], `${path}.sourceSplits`, type),
    inputChannelState: parseOptionalHandle(o['inputChannelState'], `${path}.inputChannelState`, type),
    outputChannelState: parseOptionalHandle(o['outputChannelState'], `${path}.outputChannelState`, type),
  };
}

function parseOperator(v: unknown, path: string, type: SnapshotType): OperatorSnapshot {
  const o = record(v, path);
  const operatorUid = nonEmptyString(o['operatorUid'], `${path}.operatorUid`);
  const maxParallelism = integer(o['maxParallelism'], `${path}.maxParallelism`, 1, UPPER_BOUND_MAX_PARALLELISM);
  const parallelism = integer(o['parallelism'], `${path}.parallelism`, 1, maxParallelism);
  let minIndex = 0;
  const subtasks = array(o['subtasks'], `${path}.subtasks`).map((s, i) => {
    const st = parseSubtask(s, `${path}.subtasks[${i}]`, type, parallelism, maxParallelism, minIndex);
    minIndex = st.subtaskIndex + 1;
    return st;
  });
  const coordinatorState = parseOptionalHandle(o['coordinatorState'], `${path}.coordinatorState`, type);
  const splitKind = o['splitKind'] === undefined ? undefined : nonEmptyString(o['splitKind'], `${path}.splitKind`);
  return {
    operatorUid,
    parallelism,
    maxParallelism,
    subtasks,
    ...(coordinatorState === undefined ? {} : { coordinatorState }),
    ...(splitKind === undefined ? {} : { splitKind }),
  };
}

/**
 * Checks every invariant of snapshot metadata and returns a normalized copy (plain
 * Uint8Arrays, absent handles as undefined). Throws MalformedMetadataError naming the
 * first offending field.
 */
export function parseCheckpointMetadata(value: unknown): CheckpointMetadata {
  const o = record(value, 'metadata');
  const formatVersion = integer(o['formatVersion'], 'formatVersion', 1);
  if (formatVersion !== METADATA_FORMAT_VERSION) {
    fail(`formatVersion is ${formatVersion}, this Sluice reads ${METADATA_FORMAT_VERSION}${formatVersion > METADATA_FORMAT_VERSION ? ' (written by a newer Sluice)' : ''}`);
  }
  const jobId = nonEmptyString(o['jobId'], 'jobId');
  const checkpointId = integer(o['checkpointId'], 'checkpointId', 1);
  const timestampMs = integer(o['timestampMs'], 'timestampMs', 0);
  const typeRaw = o['type'];
  if (typeRaw !== 'checkpoint' && typeRaw !== 'savepoint') fail(`type is ${show(typeRaw)}, expected "checkpoint" or "savepoint"`);
  const type: SnapshotType = typeRaw;
  const format = o['savepointFormat'];
  if (format !== undefined && format !== null) {
    if (type !== 'savepoint') fail(`savepointFormat is set on a checkpoint`);
    if (format !== 'canonical' && format !== 'native') fail(`savepointFormat is ${show(format)}, expected "canonical" or "native"`);
  }
  const uids = new Set<string>();
  const operators = array(o['operators'], 'operators').map((op, i) => {
    const parsed = parseOperator(op, `operators[${i}]`, type);
    if (uids.has(parsed.operatorUid)) fail(`operators[${i}].operatorUid ${show(parsed.operatorUid)} appears twice`);
    uids.add(parsed.operatorUid);
    return parsed;
  });
  const base = { formatVersion, jobId, checkpointId, timestampMs, type, operators };
  return format === undefined || format === null ? base : { ...base, savepointFormat: format };
}
