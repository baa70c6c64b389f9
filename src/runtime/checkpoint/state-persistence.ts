import type { JobGraph, JobVertex } from '../../graph/job-graph.js';
import { keyGroupRangeForOperator, type KeyGroupRange } from '../state/key-group.js';
import type { KeyedStateSnapshot, StateSnapshot } from '../state/keyed-state-snapshot.js';
import type { OperatorStateEntry } from '../state/operator-state-backend.js';
import { redistributeOperatorList } from '../state/redistribution.js';
import { createStatePackr } from '../state/serializer.js';
import { writeStateFileFrom, type CheckpointRef, type CheckpointStorage, type CheckpointStorageLocation } from '../storage/checkpoint-storage.js';
import { isKeyedStateFile, type KeyedSnapshotResult } from '../state/keyed-state-file.js';
import { keyGroupSlices } from '../storage/key-group-slices.js';
import { packKeyGroups, packedKeyGroupsOf } from '../state/packed-key-groups.js';
import type { CheckpointMetadata, FileScope, KeyedStateHandle, KeyGroupsStateHandle, OperatorSnapshot, StateHandle, SubtaskSnapshot } from '../storage/snapshot-format.js';
import type { InFlightBatch, SubtaskRestore, SubtaskState } from './subtask-state.js';

const packr = createStatePackr();

/**
 * Keyed state as one file per subtask: the key groups of its range one after another, each
 * a packed list of its states' entries and timers, with the offset of every key group in the
 * handle, so a restore at another parallelism reads only the key groups it owns.
 */
export async function writeKeyedState(s: KeyedSnapshotResult, location: CheckpointStorageLocation, scope: FileScope = 'exclusive'): Promise<KeyGroupsStateHandle> {
  if (isKeyedStateFile(s)) {
    // A full snapshot held outside this heap (the snapshot thread's, an lmdb spill file): written where it is.
    return { kind: 'key-groups', keyGroupRange: s.keyGroupRange, keyGroupOffsetsBytes: [...s.keyGroupOffsets], data: await writeStateFileFrom(location, s, scope) };
  }
  const { data, offsets } = packedKeyGroupsOf(s) ?? packKeyGroups(s);
  const handle: KeyGroupsStateHandle = { kind: 'key-groups', keyGroupRange: s.keyGroupRange, keyGroupOffsetsBytes: offsets, data: await location.writeStateFile(data, scope) };
  return s.baseCheckpointId === undefined ? handle : { ...handle, baseCheckpointId: s.baseCheckpointId };
}

/** What restoring needs from storage: reading the bytes of a handle. */
export type StateReader = Pick<CheckpointStorage, 'readStateHandle'>;

/** The key groups of `range` found in a handle, as a snapshot a backend restores from (a delta stays a delta). */
export async function readKeyedState(
  handle: KeyGroupsStateHandle,
  range: KeyGroupRange,
  maxParallelism: number,
  storage: StateReader,
  ref: CheckpointRef,
): Promise<KeyedStateSnapshot | undefined> {
  const slices = keyGroupSlices(handle, range).filter((s) => s.endByte > s.startByte);
  if (slices.length === 0) return undefined;
  const data = await storage.readStateHandle(handle.data, ref);
  const states = new Map<string, { kind: string; namespaced: boolean; groups: Map<number, Uint8Array> }>();
  const timers = new Map<number, Uint8Array>();
  for (const slice of slices) {
    const [entries, timerBytes] = packr.unpack(data.subarray(slice.startByte, slice.endByte)) as [[string, string, boolean, Uint8Array][], Uint8Array | null];
    for (const [name, kind, namespaced, bytes] of entries) {
      let st = states.get(name);
      if (st === undefined) states.set(name, (st = { kind, namespaced, groups: new Map() }));
      st.groups.set(slice.keyGroup, bytes);
    }
    if (timerBytes !== null) timers.set(slice.keyGroup, timerBytes);
  }
  const stateList: StateSnapshot[] = [...states].map(([name, st]) => ({ name, ...st }));
  const snap: KeyedStateSnapshot = { formatVersion: 1, maxParallelism, keyGroupRange: range, states: stateList, timers };
  return handle.baseCheckpointId === undefined ? snap : { ...snap, baseCheckpointId: handle.baseCheckpointId };
}

async function writeBlob(value: unknown, location: CheckpointStorageLocation): Promise<StateHandle> {
  return location.writeStateFile(packr.pack(value));
}

async function readBlob<T>(handle: StateHandle | undefined, storage: StateReader, ref: CheckpointRef): Promise<T | undefined> {
  if (handle === undefined) return undefined;
  return packr.unpack(await storage.readStateHandle(handle, ref)) as T;
}

/** How keyed state is written: incremental checkpoints put it into shared files and build chains. */
export interface KeyedStateWriting {
  /** Keyed state goes to the job's shared/ directory, so later checkpoints can build on it. */
  readonly incremental: boolean;
  /** The keyed handles of an operator subtask in a completed checkpoint, for a delta that builds on it. */
  readonly chainOf: (checkpointId: number, operatorUid: string, subtaskIndex: number) => readonly KeyedStateHandle[] | undefined;
  /** Changelog: the keyed handles of an operator subtask's log up to a position. */
  readonly changelogChain?: (operatorUid: string, subtaskIndex: number, position: number) => Promise<KeyedStateHandle[]>;
}

export const FULL_KEYED_STATE: KeyedStateWriting = { incremental: false, chainOf: () => undefined };

/** One subtask's acknowledged state as snapshots per operator uid of its chain, and the bytes written for it. */
export async function writeSubtaskState(
  vertex: JobVertex,
  subtaskIndex: number,
  state: SubtaskState,
  location: CheckpointStorageLocation,
  keyedWriting: KeyedStateWriting = FULL_KEYED_STATE,
): Promise<Map<string, SubtaskSnapshot>> {
  const out = new Map<string, SubtaskSnapshot>();
  const byUid = new Map(state.operators.map((o) => [o.operatorUid, o]));
  for (const [i, node] of vertex.nodes.entries()) {
    const op = byUid.get(node.operatorUid);
    let keyedState: KeyedStateHandle[] = [];
    if (op?.changelogPosition !== undefined) {
      if (keyedWriting.changelogChain === undefined) throw new Error(`'${node.name}' subtask ${subtaskIndex} sent a state changelog position, but no changelog is kept`);
      keyedState = await keyedWriting.changelogChain(node.operatorUid, subtaskIndex, op.changelogPosition);
    } else if (op?.keyed !== undefined) {
      const base = isKeyedStateFile(op.keyed) ? undefined : op.keyed.baseCheckpointId;
      const chain = base === undefined ? [] : keyedWriting.chainOf(base, node.operatorUid, subtaskIndex);
      if (chain === undefined) {
        throw new Error(
          `the keyed state of '${node.name}' subtask ${subtaskIndex} is a delta over checkpoint ${base}, whose state the coordinator no longer knows; ` +
            'the next checkpoint after this one fails is full',
        );
      }
      keyedState = [...chain, await writeKeyedState(op.keyed, location, keyedWriting.incremental || base !== undefined ? 'shared' : 'exclusive')];
    }
    const operatorState = op === undefined || op.operatorState.length === 0 ? undefined : await writeBlob(op.operatorState, location);
    const head = i === 0;
    const sourceSplits = head && state.sourceSplits !== undefined ? await writeBlob(state.sourceSplits, location) : undefined;
    const inputChannelState = head && state.inFlight.length > 0 ? await writeBlob(state.inFlight, location) : undefined;
    out.set(node.operatorUid, { subtaskIndex, keyedState, operatorState, sourceSplits, inputChannelState, outputChannelState: undefined });
  }
  return out;
}

/** Assembles `_metadata` from every subtask's snapshots. */
export function checkpointMetadata(
  jobId: string,
  checkpointId: number,
  timestampMs: number,
  graph: JobGraph,
  subtasks: ReadonlyMap<string, ReadonlyMap<string, SubtaskSnapshot>>,
  enumerators: ReadonlyMap<string, Uint8Array> = new Map(),
): CheckpointMetadata {
  const operators: OperatorSnapshot[] = [];
  for (const v of graph.vertices) {
    for (const node of v.nodes) {
      const snaps: SubtaskSnapshot[] = [];
      for (let i = 0; i < v.parallelism; i++) {
        const s = subtasks.get(subtaskKey(v.id, i))?.get(node.operatorUid);
        if (s === undefined) throw new Error(`checkpoint ${checkpointId}: no state from subtask ${i} of '${v.name}'`);
        snaps.push(s);
      }
      const enumerator = enumerators.get(node.operatorUid);
      operators.push({
        operatorUid: node.operatorUid,
        parallelism: node.parallelism,
        maxParallelism: node.maxParallelism,
        subtasks: snaps,
        ...(enumerator === undefined ? {} : { coordinatorState: { kind: 'inline' as const, bytes: enumerator } }),
        ...(node.source?.splitKind === undefined ? {} : { splitKind: node.source.splitKind }),
      });
    }
  }
  return { formatVersion: 1, jobId, checkpointId, timestampMs, type: 'checkpoint', operators };
}

export function subtaskKey(vertexId: number, subtaskIndex: number): string {
  return `${vertexId}/${subtaskIndex}`;
}

export class StateMappingError extends Error {
  override readonly name = 'StateMappingError';
}

/**
 * Whether a job can take a snapshot's state, from the snapshot's metadata alone (no state is
 * read): every operator with state finds its uid in the job (or dropping it is allowed), keyed
 * state keeps its max parallelism, a source's read positions go to a source of the same kind.
 * `restoreAssignments` checks it first; `sluice upgrade` checks it before it stops the running
 * job. Throws a StateMappingError naming the operator and the fix.
 */
export function checkStateMapping(metadata: CheckpointMetadata, graph: JobGraph, options: { allowNonRestoredState: boolean }): void {
  const byUid = new Map(metadata.operators.map((o) => [o.operatorUid, o]));
  for (const v of graph.vertices) {
    for (const node of v.nodes) {
      const old = byUid.get(node.operatorUid);
      if (old === undefined) continue;
      if (old.maxParallelism !== node.maxParallelism && old.subtasks.some((s) => s.keyedState.length > 0)) {
        throw new StateMappingError(
          `operator '${node.name}' (uid ${node.operatorUid}): the snapshot has max parallelism ${old.maxParallelism}, the job now ${node.maxParallelism}; ` +
            'keyed state cannot move to another number of key groups: set setMaxParallelism(' + old.maxParallelism + ') on the operator',
        );
      }
      const heldSplits = old.subtasks.some((s) => s.sourceSplits !== undefined) || old.coordinatorState !== undefined;
      if (heldSplits && (node.source === undefined || (old.splitKind !== undefined && node.source.splitKind !== undefined && old.splitKind !== node.source.splitKind))) {
        const now = node.source === undefined ? 'is not a source now' : `is a source of ${node.source.splitKind} splits now`;
        throw new StateMappingError(
          `operator '${node.name}' (uid ${node.operatorUid}): the snapshot holds the read positions of a source${old.splitKind === undefined ? '' : ` of ${old.splitKind} splits`}, and the operator with this uid ${now}; ` +
            'positions of one source mean nothing to another: give the new operator its own uid(), and restore with --allow-non-restored-state to leave the old positions behind',
        );
      }
    }
  }
  const unmatched = unmatchedOperators(metadata, graph);
  if (unmatched.length > 0 && !options.allowNonRestoredState) {
    throw new StateMappingError(
      `the snapshot has state for operators that are not in the job: ${unmatched.join(', ')}; ` +
        'give the operators the same uid() as before, or allow dropping that state (--allow-non-restored-state)',
    );
  }
}

/** The uids of the snapshot's operators with state that the job does not have. */
function unmatchedOperators(metadata: CheckpointMetadata, graph: JobGraph): string[] {
  const inJob = new Set(graph.vertices.flatMap((v) => v.nodes.map((n) => n.operatorUid)));
  return metadata.operators.filter((o) => !inJob.has(o.operatorUid) && (o.subtasks.some(hasState) || o.coordinatorState !== undefined)).map((o) => o.operatorUid);
}

/**
 * What every subtask of the job restores from a snapshot, redistributed to the job's current
 * parallelism: key groups to their new owners, operator list state split evenly or unioned,
 * source splits dealt out again, in-flight data to the same subtask (same parallelism only).
 */
export async function restoreAssignments(
  metadata: CheckpointMetadata,
  graph: JobGraph,
  storage: StateReader,
  ref: CheckpointRef,
  options: { allowNonRestoredState: boolean; log?: (message: string) => void },
): Promise<Map<string, SubtaskRestore>> {
  checkStateMapping(metadata, graph, options);
  const byUid = new Map(metadata.operators.map((o) => [o.operatorUid, o]));
  const result = new Map<string, SubtaskRestore>();
  for (const v of graph.vertices) {
    const perSubtask = Array.from({ length: v.parallelism }, () => ({
      checkpointId: metadata.checkpointId,
      operators: new Map<string, { keyed: KeyedStateSnapshot[]; operatorState: OperatorStateEntry[] }>(),
      sourceSplits: undefined as unknown[] | undefined,
      inFlight: [] as InFlightBatch[],
    }));
    for (const [nodeIndex, node] of v.nodes.entries()) {
      const old = byUid.get(node.operatorUid);
      if (old === undefined) continue;
      // Operator list state: gather every old subtask's lists by name, then redistribute.
      const lists = new Map<string, { mode: OperatorStateEntry['mode']; perOld: unknown[][] }>();
      for (const s of old.subtasks) {
        const entries = (await readBlob<OperatorStateEntry[]>(s.operatorState, storage, ref)) ?? [];
        for (const e of entries) {
          let l = lists.get(e.name);
          if (l === undefined) lists.set(e.name, (l = { mode: e.mode, perOld: old.subtasks.map(() => []) }));
          l.perOld[s.subtaskIndex] = [...e.values];
        }
      }
      for (const [name, l] of lists) {
        const shares = redistributeOperatorList(l.mode, l.perOld, v.parallelism);
        for (let i = 0; i < v.parallelism; i++) opEntry(perSubtask[i]!.operators, node.operatorUid).operatorState.push({ name, mode: l.mode, values: shares[i]! });
      }
      // Keyed state: each new subtask reads its key groups from every old handle.
      for (let i = 0; i < v.parallelism; i++) {
        const range = keyGroupRangeForOperator(node.maxParallelism, v.parallelism, i);
        for (const s of old.subtasks) {
          for (const h of s.keyedState) {
            const snap = await readKeyedState(h, range, node.maxParallelism, storage, ref);
            if (snap !== undefined) opEntry(perSubtask[i]!.operators, node.operatorUid).keyed.push(snap);
          }
        }
      }
      if (nodeIndex !== 0) continue;
      // Source splits: the same subtask at the same parallelism, else dealt out again.
      const splitsPerOld: unknown[][] = [];
      for (const s of old.subtasks) splitsPerOld[s.subtaskIndex] = (await readBlob<unknown[]>(s.sourceSplits, storage, ref)) ?? [];
      // Splits a split enumerator had not handed out, restored into a source that now assigns
      // its splits statically: dealt out with the readers' splits, so none is lost.
      const unassigned = node.source?.splitAssignment === 'on-request' ? [] : ((await readBlob<unknown[]>(old.coordinatorState, storage, ref)) ?? []);
      if (node.source !== undefined && (old.subtasks.some((s) => s.sourceSplits !== undefined) || unassigned.length > 0)) {
        const shares =
          old.parallelism === v.parallelism && unassigned.length === 0 ? splitsPerOld : redistributeOperatorList('split', [...splitsPerOld, unassigned], v.parallelism);
        for (let i = 0; i < v.parallelism; i++) perSubtask[i]!.sourceSplits = shares[i] ?? [];
      }
      for (const s of old.subtasks) {
        const inFlight = (await readBlob<InFlightBatch[]>(s.inputChannelState, storage, ref)) ?? [];
        if (inFlight.length === 0) continue;
        if (old.parallelism !== v.parallelism) {
          throw new StateMappingError(
            `operator '${node.name}' has in-flight data from an unaligned checkpoint, which can only be restored at the same parallelism (${old.parallelism}); ` +
              'restore from an aligned checkpoint or a savepoint to change the parallelism',
          );
        }
        perSubtask[s.subtaskIndex]!.inFlight.push(...inFlight);
      }
    }
    // Incremental chains (a full snapshot, then deltas) stay chains: the backend loads the full
    // groups and applies the deltas itself (keyed-state-delta.ts, restoredChains).
    perSubtask.forEach((r, i) => result.set(subtaskKey(v.id, i), r));
  }
  const unmatched = unmatchedOperators(metadata, graph);
  if (unmatched.length > 0) options.log?.(`dropping the state of operators that are not in the job (allowed): ${unmatched.join(', ')}`);
  return result;
}

/** A split enumerator's checkpointed state: the splits it has not handed out. */
export function encodeSplitEnumeratorState(unassigned: readonly unknown[]): Uint8Array {
  return packr.pack(unassigned);
}

/**
 * The split enumerators of the job's on-request sources, from a snapshot: the splits they had
 * not handed out, by source vertex id. A source the snapshot has splits of but no enumerator
 * state for (it assigned statically then) gets none: every split is with the readers. A
 * source without any state in the snapshot is absent: it starts from its own splits.
 */
export async function restoreSplitEnumerators(metadata: CheckpointMetadata, graph: JobGraph, storage: StateReader, ref: CheckpointRef): Promise<Map<number, unknown[]>> {
  const byUid = new Map(metadata.operators.map((o) => [o.operatorUid, o]));
  const result = new Map<number, unknown[]>();
  for (const v of graph.vertices) {
    const head = v.nodes[0]!;
    if (head.source?.splitAssignment !== 'on-request') continue;
    const old = byUid.get(head.operatorUid);
    if (old === undefined) continue;
    if (old.coordinatorState !== undefined) result.set(v.id, (await readBlob<unknown[]>(old.coordinatorState, storage, ref)) ?? []);
    else if (old.subtasks.some((s) => s.sourceSplits !== undefined)) result.set(v.id, []);
  }
  return result;
}

function hasState(s: SubtaskSnapshot): boolean {
  return s.keyedState.length > 0 || s.operatorState !== undefined || s.sourceSplits !== undefined || s.inputChannelState !== undefined;
}

function opEntry(
  map: Map<string, { keyed: KeyedStateSnapshot[]; operatorState: OperatorStateEntry[] }>,
  uid: string,
): { keyed: KeyedStateSnapshot[]; operatorState: OperatorStateEntry[] } {
  let e = map.get(uid);
  if (e === undefined) map.set(uid, (e = { keyed: [], operatorState: [] }));
  return e;
}
