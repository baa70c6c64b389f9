import { inspect } from 'node:util';
import { Configuration, ConfigError } from '../config/configuration.js';
import type { InFlightBatch } from '../runtime/checkpoint/subtask-state.js';
import { createStatePackr } from '../runtime/state/serializer.js';
import type { OperatorStateEntry } from '../runtime/state/operator-state-backend.js';
import { unpackGroup } from '../runtime/state/keyed-state-snapshot.js';
import { forEachEncodedTimer } from '../runtime/task/timer-queue.js';
import { readKeyedState } from '../runtime/checkpoint/state-persistence.js';
import { resolveDeltas } from '../runtime/state/keyed-state-delta.js';
import { locateSnapshot, readSnapshotMetadata, readStateHandleInDirectory } from '../runtime/storage/snapshot-directory-reader.js';
import { stateHandleSizeBytes, stateSizeBytes, type CheckpointMetadata, type OperatorSnapshot, type StateHandle } from '../runtime/storage/snapshot-format.js';
import { CheckpointStorageError } from '../runtime/storage/storage-errors.js';
import { CliError, commandConfiguration } from './cli-error.js';

/**
 * `sluice savepoint inspect <path>`: what a savepoint or retained checkpoint holds, read
 * with the same readers as a restore (so a damaged snapshot gives the same errors), without
 * writing a State Processor program. Pure reading: nothing is changed.
 */

export const SAVEPOINT_INSPECT_USAGE = 'usage: sluice savepoint inspect [--operator uid] [--samples N] [--json] [-D key=value]... <savepoint or checkpoint path>';

/** A snapshot opened for reading: its metadata and a reader for its state handles. */
export interface OpenedSnapshot {
  /** The snapshot directory (or s3:// prefix) it was read from. */
  readonly pointer: string;
  readonly metadata: CheckpointMetadata;
  readStateHandle(handle: StateHandle): Promise<Uint8Array>;
}

/** Opens a local snapshot directory (or `_metadata`), or an `s3://` one using the S3 settings in `config`. */
export async function openSnapshot(path: string, config?: Configuration): Promise<OpenedSnapshot> {
  if (/^s3[ap]?:\/\//i.test(path)) {
    const { openSnapshotSource } = await import('../runtime/storage/s3-checkpoint-storage.js');
    const source = await openSnapshotSource(path, config);
    const ref = { pointer: source.pointer, checkpointId: source.metadata.checkpointId };
    return { pointer: source.pointer, metadata: source.metadata, readStateHandle: (h) => source.readStateHandle(h, ref) };
  }
  const snapshot = await locateSnapshot(path);
  const metadata = await readSnapshotMetadata(snapshot);
  const ref = { pointer: snapshot.dir, checkpointId: metadata.checkpointId };
  return { pointer: snapshot.dir, metadata, readStateHandle: (h) => readStateHandleInDirectory(h, ref) };
}

// ---- the inspection, as data (what --json prints) ------------------------------------

export interface SnapshotInspection {
  readonly path: string;
  readonly jobId: string;
  readonly checkpointId: number;
  readonly type: 'checkpoint' | 'savepoint';
  /** Savepoints only: canonical or native. */
  readonly savepointFormat: 'canonical' | 'native' | null;
  readonly formatVersion: number;
  readonly timestamp: string;
  readonly stateSizeBytes: number;
  /** Operators in the snapshot (all of them, also when --operator filtered the details). */
  readonly operatorCount: number;
  readonly operators: readonly OperatorInspection[];
}

export interface OperatorInspection {
  readonly uid: string;
  /** Known only for operators without uid(), whose generated uid carries the name. */
  readonly name: string | null;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly subtasksWithState: number;
  readonly stateSizeBytes: number;
  readonly keyedState: KeyedStateInspection | null;
  readonly operatorState: readonly OperatorListInspection[];
  readonly sourceSplits: SourceSplitsInspection | null;
  /** A source with on-request split assignment: the splits its enumerator had not handed out. */
  readonly unassignedSplits: SourceSplitsInspection | null;
  readonly inFlight: InFlightInspection | null;
}

export interface KeyedStateInspection {
  /** Bytes of the keyed state handles (states and timers of every key group). */
  readonly sizeBytes: number;
  /** Key groups that hold state or timers. */
  readonly keyGroups: number;
  readonly states: readonly StateInspection[];
  readonly timers: { readonly count: number; readonly sizeBytes: number };
}

export interface StateInspection {
  readonly name: string;
  /** value, list, map, reducing, aggregating. */
  readonly kind: string;
  readonly namespaced: boolean;
  readonly sizeBytes: number;
  /** Distinct keys with a value in this state. */
  readonly keys: number;
  /** (key, namespace) pairs; equals `keys` for a state that is not namespaced. */
  readonly entries: number;
  readonly samples: readonly SampleEntry[];
}

export interface SampleEntry {
  readonly key: unknown;
  /** Namespaced states (windows): the namespace number. */
  readonly namespace?: number;
  readonly value: unknown;
}

export interface OperatorListInspection {
  readonly name: string;
  readonly mode: string;
  readonly entries: number;
  readonly samples: readonly unknown[];
}

export interface SourceSplitsInspection {
  readonly count: number;
  readonly sizeBytes: number;
  readonly samples: readonly unknown[];
}

export interface InFlightInspection {
  readonly batches: number;
  readonly records: number;
  readonly sizeBytes: number;
}

export interface InspectOptions {
  /** Only this operator's details. */
  readonly operatorUid?: string;
  /** Sample entries per state (default 5). */
  readonly samples?: number;
}

const packr = createStatePackr();

/** Reads every state handle of the snapshot (or of one operator) and summarizes it. */
export async function inspectSnapshot(snapshot: OpenedSnapshot, options: InspectOptions = {}): Promise<SnapshotInspection> {
  const m = snapshot.metadata;
  const samples = options.samples ?? 5;
  let operators = m.operators;
  if (options.operatorUid !== undefined) {
    operators = operators.filter((o) => o.operatorUid === options.operatorUid);
    if (operators.length === 0) {
      throw new CliError(
        `${m.type} ${m.checkpointId} at ${snapshot.pointer} has no operator with uid '${options.operatorUid}'; its operators are: ${m.operators.map((o) => o.operatorUid).join(', ') || '(none)'}`,
      );
    }
  }
  const inspected: OperatorInspection[] = [];
  for (const op of operators) inspected.push(await inspectOperator(op, snapshot, samples));
  return {
    path: snapshot.pointer,
    jobId: m.jobId,
    checkpointId: m.checkpointId,
    type: m.type,
    savepointFormat: m.type === 'savepoint' ? (m.savepointFormat ?? 'canonical') : null,
    formatVersion: m.formatVersion,
    timestamp: new Date(m.timestampMs).toISOString(),
    stateSizeBytes: stateSizeBytes(m),
    operatorCount: m.operators.length,
    operators: inspected,
  };
}

interface StateAccumulator {
  kind: string;
  namespaced: boolean;
  sizeBytes: number;
  keys: number;
  entries: number;
  samples: SampleEntry[];
}

async function inspectOperator(op: OperatorSnapshot, snapshot: OpenedSnapshot, samples: number): Promise<OperatorInspection> {
  const states = new Map<string, StateAccumulator>();
  let keyedBytes = 0;
  let keyGroups = 0;
  let hasKeyed = false;
  const timers = { count: 0, sizeBytes: 0 };
  const lists = new Map<string, { mode: string; entries: number; samples: unknown[] }>();
  let splits: { count: number; sizeBytes: number; samples: unknown[] } | null = null;
  let inFlight: { batches: number; records: number; sizeBytes: number } | null = null;
  let size = 0;
  let subtasksWithState = 0;

  for (const st of op.subtasks) {
    let any = false;
    // An incremental checkpoint's chain (a full handle, then deltas) is folded first.
    const keyedSnapshots = [];
    for (const h of st.keyedState) {
      hasKeyed = true;
      any = true;
      const n = stateHandleSizeBytes(h.data);
      keyedBytes += n;
      size += n;
      const snap = await readKeyedState(h, h.keyGroupRange, op.maxParallelism, { readStateHandle: (handle) => snapshot.readStateHandle(handle) }, { pointer: '', checkpointId: 0 });
      if (snap !== undefined) keyedSnapshots.push(snap);
    }
    for (const snap of resolveDeltas(keyedSnapshots)) {
      const groups = new Set<number>(snap.timers.keys());
      for (const s of snap.states) {
        let acc = states.get(s.name);
        if (acc === undefined) states.set(s.name, (acc = { kind: s.kind, namespaced: s.namespaced, sizeBytes: 0, keys: 0, entries: 0, samples: [] }));
        for (const [kg, bytes] of s.groups) {
          groups.add(kg);
          acc.sizeBytes += bytes.length;
          addGroupEntries(acc, unpackGroup(bytes), samples);
        }
      }
      keyGroups += groups.size;
      for (const timerBytes of snap.timers.values()) {
        timers.sizeBytes += timerBytes.length;
        timers.count += countTimers(timerBytes);
      }
    }
    if (st.operatorState !== undefined) {
      any = true;
      size += stateHandleSizeBytes(st.operatorState);
      const entries = packr.unpack(await snapshot.readStateHandle(st.operatorState)) as OperatorStateEntry[];
      for (const e of entries) {
        let l = lists.get(e.name);
        if (l === undefined) lists.set(e.name, (l = { mode: e.mode, entries: 0, samples: [] }));
        l.entries += e.values.length;
        for (const v of e.values) if (l.samples.length < samples) l.samples.push(v);
      }
    }
    if (st.sourceSplits !== undefined) {
      any = true;
      const n = stateHandleSizeBytes(st.sourceSplits);
      size += n;
      const values = packr.unpack(await snapshot.readStateHandle(st.sourceSplits)) as unknown[];
      splits ??= { count: 0, sizeBytes: 0, samples: [] };
      splits.count += values.length;
      splits.sizeBytes += n;
      for (const v of values) if (splits.samples.length < samples) splits.samples.push(v);
    }
    for (const h of [st.inputChannelState, st.outputChannelState]) {
      if (h === undefined) continue;
      any = true;
      const n = stateHandleSizeBytes(h);
      size += n;
      const batches = packr.unpack(await snapshot.readStateHandle(h)) as InFlightBatch[];
      inFlight ??= { batches: 0, records: 0, sizeBytes: 0 };
      inFlight.batches += batches.length;
      inFlight.records += batches.reduce((a, b) => a + b.values.length, 0);
      inFlight.sizeBytes += n;
    }
    if (any) subtasksWithState++;
  }
  let unassigned: SourceSplitsInspection | null = null;
  if (op.coordinatorState !== undefined) {
    const n = stateHandleSizeBytes(op.coordinatorState);
    size += n;
    const values = packr.unpack(await snapshot.readStateHandle(op.coordinatorState)) as unknown[];
    unassigned = { count: values.length, sizeBytes: n, samples: values.slice(0, samples) };
  }

  const auto = /^auto-\d+-(.+)$/.exec(op.operatorUid);
  return {
    uid: op.operatorUid,
    name: auto === null ? null : auto[1]!,
    parallelism: op.parallelism,
    maxParallelism: op.maxParallelism,
    subtasksWithState,
    stateSizeBytes: size,
    keyedState: hasKeyed
      ? {
          sizeBytes: keyedBytes,
          keyGroups,
          states: [...states].map(([name, a]) => ({ name, kind: a.kind, namespaced: a.namespaced, sizeBytes: a.sizeBytes, keys: a.keys, entries: a.entries, samples: a.samples })),
          timers,
        }
      : null,
    operatorState: [...lists].map(([name, l]) => ({ name, ...l })),
    sourceSplits: splits,
    unassignedSplits: unassigned,
    inFlight,
  };
}

/** One key group of one state: key -> value, or key -> (namespace -> value); also the older [keys, values] columns. */
function addGroupEntries(acc: StateAccumulator, packed: unknown, samples: number): void {
  const add = (key: unknown, value: unknown): void => {
    acc.keys++;
    if (!acc.namespaced) {
      acc.entries++;
      if (acc.samples.length < samples) acc.samples.push({ key, value });
      return;
    }
    for (const [ns, v] of namespaceEntries(value)) {
      acc.entries++;
      if (acc.samples.length < samples) acc.samples.push({ key, namespace: ns, value: v });
    }
  };
  if (packed instanceof Map) {
    for (const [k, v] of packed) add(k, v);
  } else if (Array.isArray(packed) && packed.length === 2 && Array.isArray(packed[0]) && Array.isArray(packed[1])) {
    const [keys, values] = packed as [unknown[], unknown[]];
    keys.forEach((k, i) => {
      if (!acc.namespaced) add(k, values[i]);
      else {
        const [nss, vs] = values[i] as [number[], unknown[]];
        add(k, new Map(nss.map((ns, j) => [ns, vs[j]])));
      }
    });
  }
}

function namespaceEntries(v: unknown): [number, unknown][] {
  if (v instanceof Map) return [...(v as Map<number, unknown>)];
  return [[0, v]];
}

/** Timers of one key group: [event, processing], each a packed Map<timestamp, Map<key, namespaces>> or null. */
function countTimers(bytes: Uint8Array): number {
  const v = unpackGroup(bytes);
  if (!Array.isArray(v)) return 0;
  let n = 0;
  if (v.length === 2 && (v[0] === null || v[0] instanceof Uint8Array) && (v[1] === null || v[1] instanceof Uint8Array)) {
    for (const part of v as (Uint8Array | null)[]) {
      if (part === null) continue;
      forEachEncodedTimer(part, () => n++);
    }
    return n;
  }
  return v.length; // earlier format: one row per timer
}

// ---- rendering -------------------------------------------------------------------------

/** A value as compact text: Maps, bigints, dates and bytes as JavaScript shows them. */
export function renderValue(v: unknown): string {
  if (v instanceof Uint8Array) return renderBytes(v);
  return inspect(v, { depth: 4, breakLength: Infinity, maxArrayLength: 10, maxStringLength: 120, colors: false });
}

function renderBytes(b: Uint8Array): string {
  const hex = Buffer.from(b.buffer, b.byteOffset, Math.min(b.byteLength, 16)).toString('hex');
  return `<${b.byteLength} bytes ${hex}${b.byteLength > 16 ? '…' : ''}>`;
}

/** A value as JSON: Maps as arrays of [key, value] pairs, bigints as strings, bytes as base64. */
export function jsonSafe(v: unknown, depth = 0): unknown {
  if (depth > 16) return '…';
  if (v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Uint8Array) return { bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Map) return [...v].map(([k, x]) => [jsonSafe(k, depth + 1), jsonSafe(x, depth + 1)]);
  if (v instanceof Set) return [...v].map((x) => jsonSafe(x, depth + 1));
  if (Array.isArray(v)) return v.map((x) => jsonSafe(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = jsonSafe(x, depth + 1);
  return out;
}

export function inspectionToJson(i: SnapshotInspection): string {
  return JSON.stringify(jsonSafe(i), null, 2);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The human-readable report. */
export function formatInspection(i: SnapshotInspection): string {
  const lines: string[] = [];
  const what = i.type === 'savepoint' ? `Savepoint (${i.savepointFormat ?? 'canonical'} format)` : 'Retained checkpoint';
  lines.push(`${what} ${i.path}`);
  lines.push(`  job id          ${i.jobId}`);
  lines.push(`  checkpoint id   ${i.checkpointId}`);
  lines.push(`  taken at        ${i.timestamp}`);
  lines.push(`  format version  ${i.formatVersion} (_metadata)`);
  lines.push(`  state size      ${formatBytes(i.stateSizeBytes)} (${i.stateSizeBytes} bytes)`);
  lines.push(`  operators       ${i.operatorCount}${i.operators.length < i.operatorCount ? ` (${i.operators.length} shown)` : ''}`);
  for (const op of i.operators) {
    lines.push('');
    lines.push(`Operator ${op.uid}${op.name === null ? '' : ` ('${op.name}', no uid() given)`}`);
    lines.push(`  parallelism ${op.parallelism}, max parallelism ${op.maxParallelism}; ${plural(op.subtasksWithState, 'subtask')} with state, ${formatBytes(op.stateSizeBytes)}`);
    const nothing = op.keyedState === null && op.operatorState.length === 0 && op.sourceSplits === null && op.unassignedSplits === null && op.inFlight === null;
    if (nothing) lines.push('  no state');
    if (op.keyedState !== null) {
      const k = op.keyedState;
      lines.push(`  keyed state: ${formatBytes(k.sizeBytes)} in ${plural(k.keyGroups, 'key group')}, ${plural(k.states.length, 'state')}, ${plural(k.timers.count, 'timer')}`);
      for (const s of k.states) {
        const entries = s.namespaced ? `, ${plural(s.entries, 'entry', 'entries')} (key, namespace)` : '';
        lines.push(`    state '${s.name}': ${s.kind}, ${s.namespaced ? 'namespaced' : 'not namespaced'}; ${plural(s.keys, 'key')}${entries}, ${formatBytes(s.sizeBytes)}`);
        for (const e of s.samples) {
          const ns = e.namespace === undefined ? '' : ` [namespace ${e.namespace}]`;
          lines.push(`      ${renderValue(e.key)}${ns} -> ${renderValue(e.value)}`);
        }
        if (s.entries > s.samples.length && s.samples.length > 0) lines.push(`      … ${s.entries - s.samples.length} more`);
      }
    }
    for (const l of op.operatorState) {
      lines.push(`  operator state '${l.name}' (${l.mode}): ${plural(l.entries, 'entry', 'entries')}`);
      for (const v of l.samples) lines.push(`      ${renderValue(v)}`);
      if (l.entries > l.samples.length && l.samples.length > 0) lines.push(`      … ${l.entries - l.samples.length} more`);
    }
    if (op.sourceSplits !== null) {
      const s = op.sourceSplits;
      lines.push(`  source splits: ${s.count}, ${formatBytes(s.sizeBytes)}`);
      for (const v of s.samples) lines.push(`      ${renderValue(v)}`);
      if (s.count > s.samples.length && s.samples.length > 0) lines.push(`      … ${s.count - s.samples.length} more`);
    }
    if (op.unassignedSplits !== null) {
      const s = op.unassignedSplits;
      lines.push(`  splits not handed out yet (split enumerator): ${s.count}, ${formatBytes(s.sizeBytes)}`);
      for (const v of s.samples) lines.push(`      ${renderValue(v)}`);
      if (s.count > s.samples.length && s.samples.length > 0) lines.push(`      … ${s.count - s.samples.length} more`);
    }
    if (op.inFlight !== null) {
      lines.push(`  in-flight data (unaligned checkpoint): ${plural(op.inFlight.records, 'record')} in ${plural(op.inFlight.batches, 'batch', 'batches')}, ${formatBytes(op.inFlight.sizeBytes)}`);
    }
  }
  return lines.join('\n');
}

// ---- the command -----------------------------------------------------------------------

/** `sluice savepoint inspect <path> [--operator uid] [--samples N] [--json]`. */
export async function savepointInspectCommand(argv: readonly string[], config?: Configuration): Promise<number> {
  let operatorUid: string | undefined;
  let samples = 5;
  let json = false;
  const positional: string[] = [];
  const conf = config ?? commandConfiguration();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--operator' || a === '--uid') {
      operatorUid = argv[++i];
      if (operatorUid === undefined) throw new CliError(`${a} needs an operator uid\n${SAVEPOINT_INSPECT_USAGE}`, 2);
    } else if (a === '--samples') {
      const v = argv[++i];
      if (v === undefined || !/^\d+$/.test(v)) throw new CliError(`--samples needs a number >= 0\n${SAVEPOINT_INSPECT_USAGE}`, 2);
      samples = Number(v);
    } else if (a === '--json') {
      json = true;
    } else if (a === '-D') {
      const assignment = argv[++i];
      if (assignment === undefined) throw new CliError(`-D needs key=value\n${SAVEPOINT_INSPECT_USAGE}`, 2);
      try {
        conf.setFromString(assignment);
      } catch (e) {
        if (e instanceof ConfigError) throw new CliError(e.message, 2);
        throw e;
      }
    } else if (a.startsWith('-') && a !== '-') {
      throw new CliError(`unknown option '${a}'\n${SAVEPOINT_INSPECT_USAGE}`, 2);
    } else positional.push(a);
  }
  if (positional.length !== 1) {
    throw new CliError(`${positional.length === 0 ? 'missing the path of a savepoint or retained checkpoint' : `too many arguments: ${positional.join(' ')}`}\n${SAVEPOINT_INSPECT_USAGE}`, 2);
  }
  let inspection: SnapshotInspection;
  try {
    const snapshot = await openSnapshot(positional[0]!, conf);
    inspection = await inspectSnapshot(snapshot, { ...(operatorUid === undefined ? {} : { operatorUid }), samples });
  } catch (e) {
    if (e instanceof CheckpointStorageError) throw new CliError(e.message);
    throw e;
  }
  process.stdout.write((json ? inspectionToJson(inspection) : formatInspection(inspection)) + '\n');
  return 0;
}
