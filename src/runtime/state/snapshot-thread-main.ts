import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { HeapReplica } from './heap-replica.js';
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

port.on('message', (m: SnapshotThreadRequest) => {
  const started = performance.now();
  let reply: SnapshotThreadReply;
  const transfer: ArrayBuffer[] = [];
  try {
    switch (m.op) {
      case 'reset': {
        let r = replicas.get(m.replica);
        if (r === undefined) replicas.set(m.replica, (r = new HeapReplica()));
        r.reset(m.position, fromSnapshotParts(m.parts));
        reply = { request: m.request, ok: true, busyMs: performance.now() - started };
        break;
      }
      case 'apply': {
        const r = replicas.get(m.replica);
        if (r === undefined) throw new Error(`replica ${m.replica} is not here (not reset, or dropped after a failure)`);
        r.apply(m.base, m.position, fromSnapshotParts(m.parts));
        const full = r.snapshot();
        // Packed as the keyed state file: the task thread writes it as it is, and the groups are views into it.
        const groups = full.states.map((): number[] => []);
        const timers: number[] = [];
        const snapshot = { formatVersion: 1 as const, maxParallelism: m.maxParallelism, keyGroupRange: m.keyGroupRange, states: full.states, timers: full.timers };
        const { data, offsets } = packKeyGroups(snapshot, (state, kg, offset, length) => (state < 0 ? timers : groups[state]!).push(kg, offset, length));
        const parts: SnapshotParts = {
          buffer: data.buffer as ArrayBuffer,
          states: full.states.map((st, i) => ({ name: st.name, kind: st.kind, namespaced: st.namespaced, groups: groups[i]! })),
          timers,
        };
        transfer.push(parts.buffer);
        reply = { request: m.request, ok: true, parts, keyGroupOffsets: offsets, busyMs: performance.now() - started };
        break;
      }
      case 'drop':
        replicas.delete(m.replica);
        reply = { request: m.request, ok: true, busyMs: performance.now() - started };
        break;
    }
  } catch (e) {
    replicas.delete(m.replica);
    reply = { request: m.request, ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply, transfer);
});
