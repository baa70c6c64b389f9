import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { writeChecksummedFileDurably } from '../storage/durable-file.js';
import { HeapReplica } from './heap-replica.js';
import type { KeyGroupRange } from './key-group.js';
import { packKeyGroups } from './packed-key-groups.js';
import { fromSnapshotParts, type SnapshotParts } from './snapshot-parts.js';
import type { SnapshotThreadReply, SnapshotThreadRequest } from './snapshot-thread-protocol.js';

/**
 * The snapshot thread (a worker): hosts the replicas of the heap keyed state backends of its
 * process and assembles their full snapshots (see snapshot-thread.ts). A request that fails
 * drops its replica, so the backend's next snapshot resets it from a full capture.
 */
const port = parentPort;
if (port === null) throw new Error('snapshot-thread-main.js runs as a worker thread (new Worker), not as a program');

const replicas = new Map<number, HeapReplica>();

/**
 * Snapshots are background work: on Linux this thread lowers its own scheduling priority
 * (a thread id works as a process id for setpriority), so on a busy machine the task thread
 * keeps its core and a checkpoint takes longer instead. Elsewhere it runs at normal priority.
 */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, constants.priority.PRIORITY_LOW);
  } catch {
    // not Linux, or not allowed: normal priority
  }
}
lowerPriority();

/** A full snapshot assembled here, kept until the task thread has it written or takes it. */
interface Held {
  readonly parts: SnapshotParts;
  readonly keyGroupOffsets: number[];
}

/**
 * Held full snapshots by replica, in position order. At most HELD_PER_REPLICA_MAX per replica:
 * one is held from its checkpoint's acknowledgement until its state is written, so more
 * than a few means their checkpoints were dropped without a release; the oldest goes.
 */
const held = new Map<number, Map<number, Held>>();
const HELD_PER_REPLICA_MAX = 4;

function hold(replica: number, position: number, h: Held): void {
  let byPosition = held.get(replica);
  if (byPosition === undefined) held.set(replica, (byPosition = new Map()));
  byPosition.set(position, h);
  for (const oldest of byPosition.keys()) {
    if (byPosition.size <= HELD_PER_REPLICA_MAX) break;
    byPosition.delete(oldest);
  }
}

function unhold(replica: number, position: number): Held {
  const h = held.get(replica)?.get(position);
  if (h === undefined) {
    throw new Error(
      `the full snapshot at position ${position} of replica ${replica} is not held here (written or taken already, or dropped: at most ${HELD_PER_REPLICA_MAX} are held per backend)`,
    );
  }
  held.get(replica)!.delete(position);
  return h;
}

/** The replica's full snapshot, packed as the keyed state file: the task thread writes it as it is, and the groups are views into it. */
function assemble(r: HeapReplica, keyGroupRange: KeyGroupRange, maxParallelism: number): Held {
  const full = r.snapshot();
  const groups = full.states.map((): number[] => []);
  const timers: number[] = [];
  const snapshot = { formatVersion: 1 as const, maxParallelism, keyGroupRange, states: full.states, timers: full.timers };
  const { data, offsets } = packKeyGroups(snapshot, (state, kg, offset, length) => (state < 0 ? timers : groups[state]!).push(kg, 0, offset, length));
  const parts: SnapshotParts = {
    buffers: [data.buffer as ArrayBuffer],
    states: full.states.map((st, i) => ({ name: st.name, kind: st.kind, namespaced: st.namespaced, groups: groups[i]! })),
    timers,
  };
  return { parts, keyGroupOffsets: offsets };
}

/** The answer to a request that ran here; writes answer later (writeHeld). */
function handle(m: SnapshotThreadRequest, started: number, transfer: ArrayBuffer[]): SnapshotThreadReply | undefined {
  switch (m.op) {
    case 'reset': {
      let r = replicas.get(m.replica);
      if (r === undefined) replicas.set(m.replica, (r = new HeapReplica()));
      r.reset(m.position, fromSnapshotParts(m.parts));
      return { request: m.request, ok: true, busyMs: performance.now() - started };
    }
    case 'apply': {
      const r = replicas.get(m.replica);
      if (r === undefined) throw new Error(`replica ${m.replica} is not here (not reset, or dropped after a failure)`);
      r.apply(m.base, m.position, fromSnapshotParts(m.parts));
      // The replica keeps nothing of a delta's buffers (merged groups are new bytes): they go back to be written again.
      const recycled = [...m.parts.buffers];
      transfer.push(...recycled);
      const h = assemble(r, m.keyGroupRange, m.maxParallelism);
      if (m.hold) {
        hold(m.replica, m.position, h);
        return { request: m.request, ok: true, sizeBytes: h.parts.buffers[0]!.byteLength, keyGroupOffsets: h.keyGroupOffsets, recycled, busyMs: performance.now() - started };
      }
      transfer.push(h.parts.buffers[0]!);
      return { request: m.request, ok: true, parts: h.parts, keyGroupOffsets: h.keyGroupOffsets, recycled, busyMs: performance.now() - started };
    }
    case 'take': {
      const h = unhold(m.replica, m.position);
      transfer.push(h.parts.buffers[0]!);
      return { request: m.request, ok: true, parts: h.parts, keyGroupOffsets: h.keyGroupOffsets, busyMs: performance.now() - started };
    }
    case 'release':
      held.get(m.replica)?.delete(m.position);
      return { request: m.request, ok: true, busyMs: performance.now() - started };
    case 'write':
      writeHeld(m, unhold(m.replica, m.position), started);
      return undefined;
    case 'drop':
      // Its held snapshots stay until written, taken or released: a subtask may end (and
      // dispose its backend) while the coordinator still writes the state it acknowledged.
      replicas.delete(m.replica);
      return { request: m.request, ok: true, busyMs: performance.now() - started };
  }
}

/** Writes a held snapshot's state file; the answer follows when it is durable. */
function writeHeld(m: SnapshotThreadRequest & { op: 'write' }, h: Held, started: number): void {
  writeChecksummedFileDurably(m.path, new Uint8Array(h.parts.buffers[0]!), 'state', m.randomHex16).then(
    (checksum) => port!.postMessage({ request: m.request, ok: true, checksum, busyMs: performance.now() - started } satisfies SnapshotThreadReply),
    (e: unknown) => port!.postMessage({ request: m.request, ok: false, error: errorMessage(e) } satisfies SnapshotThreadReply),
  );
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

port.on('message', (m: SnapshotThreadRequest) => {
  const started = performance.now();
  const transfer: ArrayBuffer[] = [];
  let reply: SnapshotThreadReply | undefined;
  try {
    reply = handle(m, started, transfer);
  } catch (e) {
    // A replica that failed to move forward is reset by its backend's next snapshot; a held snapshot's failure leaves the replica as it is.
    if (m.op === 'reset' || m.op === 'apply') replicas.delete(m.replica);
    reply = { request: m.request, ok: false, error: errorMessage(e) };
  }
  if (reply !== undefined) port.postMessage(reply, transfer);
});
