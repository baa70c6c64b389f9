// State backend benchmarks, in the shape of bench/checkpoint-benchmarks.js (steps in fresh
// processes, metrics per run, median over runs). Names as in /work/shared/BENCH_FORMAT.md.
//
// restore-large-state: a keyed state of RESTORE.keys entries (ValueState of a RESTORE.valueBytes
// string each) is written into an lmdb backend and snapshotted in the canonical format; a
// fresh lmdb backend then restores it. restoreMs = restore() of the decoded snapshot until the
// first read of the state returns (state loaded into LMDB, sorted per key group); stateBytes =
// the encoded snapshot. Backend level: reading the checkpoint files is not included.
import { valueState } from '../dist/index.js';
import { LmdbKeyedStateBackend } from '../dist/runtime/state/lmdb-keyed-state-backend.js';
import { HeapKeyedStateBackend } from '../dist/runtime/state/heap-keyed-state-backend.js';
import { keyGroupRangeForOperator } from '../dist/runtime/state/key-group.js';
import { decodeKeyedStateSnapshot, encodeKeyedStateSnapshot } from '../dist/runtime/state/keyed-state-snapshot.js';

const RESTORE = { keys: 1_000_000, valueBytes: 200, maxParallelism: 128 };

async function restoreStep() {
  const range = keyGroupRangeForOperator(RESTORE.maxParallelism, 1, 0);
  const descriptor = valueState('payload');
  const source = new LmdbKeyedStateBackend(range, RESTORE.maxParallelism, Date.now);
  const s = source.getOrCreateState(descriptor, false);
  const filler = 'x'.repeat(RESTORE.valueBytes - 12);
  let t = performance.now();
  for (let k = 0; k < RESTORE.keys; k++) {
    source.setCurrentKey(k);
    s.update(`${String(k).padStart(11, '0')}/${filler}`);
  }
  const writeMs = performance.now() - t;
  t = performance.now();
  const bytes = encodeKeyedStateSnapshot(await source.snapshot()());
  const snapshotMs = performance.now() - t;
  source.dispose();
  const snap = decodeKeyedStateSnapshot(bytes);

  const restoreInto = (backend) => {
    const started = performance.now();
    backend.restore([snap]);
    const r = backend.getOrCreateState(descriptor, false);
    backend.setCurrentKey(RESTORE.keys - 1);
    if (r.value() === undefined) throw new Error('INVALID BENCHMARK: the restored state misses the last key');
    const ms = performance.now() - started;
    backend.setCurrentKey(0);
    if (!String(r.value()).startsWith('00000000000/')) throw new Error('INVALID BENCHMARK: wrong value restored for key 0');
    return ms;
  };
  const lmdb = new LmdbKeyedStateBackend(range, RESTORE.maxParallelism, Date.now);
  const restoreMs = restoreInto(lmdb);
  const entries = lmdb.numEntries('payload');
  lmdb.dispose();
  if (entries !== RESTORE.keys) throw new Error(`INVALID BENCHMARK: restored ${entries} entries, expected ${RESTORE.keys}`);
  const restoreMsHashmap = restoreInto(new HeapKeyedStateBackend(range, RESTORE.maxParallelism, Date.now));
  return { restoreMs, restoreMsHashmap, stateBytes: bytes.length, writeMs, snapshotMs, entries };
}

export const stateBackendBenchmarks = {
  'restore-large-state': {
    description: `lmdb backend: ${RESTORE.keys} keys, ValueState of a ${RESTORE.valueBytes}-byte string each, one subtask (max parallelism ${RESTORE.maxParallelism}); restoreMs = restore from the decoded canonical snapshot until the first read returns (restoreMsHashmap: the same into the heap backend, for comparison)`,
    parallelism: 1,
    headline: ['restoreMs', 'stateBytes'],
    target: {},
    config: { 'state.backend.type': 'lmdb', ...RESTORE },
    steps: () => ['restore'],
    runStep: () => restoreStep(),
    metrics: (samples) => {
      const { restore: s } = samples;
      return {
        restoreMs: Math.round(s.restoreMs),
        stateBytes: s.stateBytes,
        restoreMsHashmap: Math.round(s.restoreMsHashmap),
        writeMs: Math.round(s.writeMs),
        snapshotMs: Math.round(s.snapshotMs),
      };
    },
  },
};
