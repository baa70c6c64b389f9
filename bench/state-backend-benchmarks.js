// State backend benchmarks, in the shape of bench/checkpoint-benchmarks.js (steps in fresh
// processes, metrics per run, median over runs). Names as in /work/shared/BENCH_FORMAT.md.
//
// restore-large-state: a keyed state of RESTORE.keys entries (ValueState of a RESTORE.valueBytes
// string each) is written into an lmdb backend and snapshotted in the canonical format; a
// fresh lmdb backend then restores it. restoreMs = restore() of the decoded snapshot until the
// first read of the state returns (state loaded into LMDB, sorted per key group); stateBytes =
// the encoded snapshot. Backend level: reading the checkpoint files is not included.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

// incremental-checkpoint: INCR.keys keys (ValueState of an INCR.valueBytes string each) in one
// keyed subtask, checkpointed with execution.checkpointing.incremental into filesystem storage.
// A full checkpoint first; then each round updates INCR.updateFraction of the keys (1% per
// second of the workload: one round = one second of changes) and takes an incremental
// checkpoint. uploadedToChangedRatio = bytes written by the checkpoint / bytes of the changed
// entries (record key + value, msgpack-encoded: what a perfect delta holds); durationMs =
// synchronous part + asynchronous part + writing the file; restoreMs = reading the chain
// (full + deltas) from storage, folding it and restoring a fresh backend until the first read.
const INCR = {
  keys: Number(process.env.SLUICE_BENCH_INCREMENTAL_KEYS ?? 1_000_000),
  valueBytes: 200,
  updateFraction: 0.01,
  rounds: 12,
  maxParallelism: 128,
  backend: process.env.SLUICE_BENCH_INCREMENTAL_BACKEND ?? 'lmdb',
};

async function incrementalStep() {
  const { FilesystemCheckpointStorage } = await import('../dist/runtime/storage/filesystem-checkpoint-storage.js');
  const { writeKeyedState, readKeyedState } = await import('../dist/runtime/checkpoint/state-persistence.js');
  const { createStatePackr } = await import('../dist/runtime/state/serializer.js');
  const packr = createStatePackr();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-incremental-'));
  const range = keyGroupRangeForOperator(INCR.maxParallelism, 1, 0);
  const descriptor = valueState('payload');
  const make = () => (INCR.backend === 'lmdb' ? new LmdbKeyedStateBackend(range, INCR.maxParallelism, Date.now) : new HeapKeyedStateBackend(range, INCR.maxParallelism, Date.now));
  const backend = make();
  const s = backend.getOrCreateState(descriptor, false);
  const filler = 'x'.repeat(INCR.valueBytes - 20);
  const value = (k, round) => `${String(k).padStart(11, '0')}/${String(round).padStart(7, '0')}/${filler}`;
  let t = performance.now();
  for (let k = 0; k < INCR.keys; k++) {
    backend.setCurrentKey(k);
    s.update(value(k, 0));
  }
  const fillMs = performance.now() - t;
  const storage = await FilesystemCheckpointStorage.open({ checkpointsDir: dir, jobId: '0'.repeat(32), dataInlineThresholdBytes: 0 });
  const ref = { pointer: join(dir, '0'.repeat(32), 'chk-1'), checkpointId: 1 };
  const checkpoint = async (id) => {
    const started = performance.now();
    const finish = backend.snapshot({ checkpointId: id, incremental: true });
    const syncMs = performance.now() - started;
    const snap = await finish();
    const location = await storage.createCheckpointLocation(id);
    const handle = await writeKeyedState(snap, location, 'shared');
    const durationMs = performance.now() - started;
    backend.notifyCheckpointComplete(id);
    return { handle, durationMs, syncMs, uploadedBytes: handle.data.sizeBytes, delta: snap.baseCheckpointId !== undefined };
  };
  const full = await checkpoint(1);
  const chain = [full.handle];
  const { seededRandom } = await import('../dist/testing/seeded-random.js');
  const rand = seededRandom(42);
  const rounds = [];
  for (let round = 1; round <= INCR.rounds; round++) {
    const changed = new Set();
    const n = Math.round(INCR.keys * INCR.updateFraction);
    let changedBytes = 0;
    while (changed.size < n) changed.add(Math.floor(rand() * INCR.keys));
    for (const k of changed) {
      backend.setCurrentKey(k);
      const v = value(k, round);
      s.update(v);
      changedBytes += packr.pack(k).length + packr.pack(v).length;
    }
    const c = await checkpoint(round + 1);
    if (!c.delta) throw new Error(`INVALID BENCHMARK: checkpoint ${round + 1} was full, not incremental`);
    chain.push(c.handle);
    rounds.push({ durationMs: c.durationMs, syncMs: c.syncMs, uploadedBytes: c.uploadedBytes, changedBytes, ratio: c.uploadedBytes / changedBytes });
  }
  // The same rounds with the state changelog: the round's updates go to the log in 10 segments
  // (persist-delay 100 ms), and a checkpoint only captures and writes the tail since the last one.
  let position = 100;
  const segment = async (kind) => {
    const started = performance.now();
    const snap = await backend.snapshot({ checkpointId: ++position, incremental: false, changelog: kind })();
    const handle = await writeKeyedState(snap, { checkpointId: 0, writeStateFile: (b) => storage.writeSharedStateFile(b) });
    return { durationMs: performance.now() - started, bytes: handle.data.kind === 'inline' ? handle.data.bytes.length : handle.data.sizeBytes };
  };
  const materialization = await segment('materialize');
  const changelogRounds = [];
  for (let round = 1; round <= INCR.rounds; round++) {
    const n = Math.round(INCR.keys * INCR.updateFraction);
    let changedBytes = 0;
    let logged = 0;
    for (let slice = 0; slice < 10; slice++) {
      for (let i = 0; i < n / 10; i++) {
        const k = Math.floor(rand() * INCR.keys);
        backend.setCurrentKey(k);
        const v = value(k, 1000 + round);
        s.update(v);
        changedBytes += packr.pack(k).length + packr.pack(v).length;
      }
      if (slice < 9) logged += (await segment('segment')).bytes;
    }
    const tail = await segment('segment');
    changelogRounds.push({ durationMs: tail.durationMs, ratio: (logged + tail.bytes) / changedBytes });
  }
  backend.dispose();
  // The restore runs in a fresh process (step 'restore'), as in a TaskManager restarted after a
  // failure: it finds the chain through this file.
  writeFileSync(INCR_CHAIN_FILE, JSON.stringify({ dir, range, chain }));
  const sorted = (xs) => [...xs].sort((a, b) => a - b);
  const q = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  return {
    uploadedToChangedRatio: q(rounds.map((x) => x.ratio), 0.5),
    changelogDurationMsP50: q(changelogRounds.map((x) => x.durationMs), 0.5),
    changelogDurationMsP99: q(changelogRounds.map((x) => x.durationMs), 0.99),
    changelogUploadedToChangedRatio: q(changelogRounds.map((x) => x.ratio), 0.5),
    materializationMs: materialization.durationMs,
    durationMsP50: q(rounds.map((x) => x.durationMs), 0.5),
    durationMsP99: q(rounds.map((x) => x.durationMs), 0.99),
    fullCheckpointMs: full.durationMs,
    fullCheckpointBytes: full.uploadedBytes,
    uploadedBytesP50: q(rounds.map((x) => x.uploadedBytes), 0.5),
    changedBytesP50: q(rounds.map((x) => x.changedBytes), 0.5),
    syncMsP50: q(rounds.map((x) => x.syncMs), 0.5),
    fillMs,
  };
}

const INCR_CHAIN_FILE = join(tmpdir(), 'sluice-bench-incremental-chain.json');

/** Restores the chain the 'incremental' step left (read from storage, loaded into a fresh backend) until the first read answers. */
async function incrementalRestoreStep() {
  const { FilesystemCheckpointStorage } = await import('../dist/runtime/storage/filesystem-checkpoint-storage.js');
  const { readKeyedState } = await import('../dist/runtime/checkpoint/state-persistence.js');
  const { dir, range, chain } = JSON.parse(readFileSync(INCR_CHAIN_FILE, 'utf8'));
  try {
    const storage = await FilesystemCheckpointStorage.open({ checkpointsDir: dir, jobId: '0'.repeat(32), dataInlineThresholdBytes: 0 });
    const ref = { pointer: join(dir, '0'.repeat(32), 'chk-1'), checkpointId: 1 };
    const descriptor = valueState('payload');
    const t = performance.now();
    const snaps = [];
    for (const h of chain) {
      const snap = await readKeyedState(h, range, INCR.maxParallelism, storage, ref);
      if (snap !== undefined) snaps.push(snap);
    }
    const restoreReadMs = performance.now() - t;
    const restored = INCR.backend === 'lmdb' ? new LmdbKeyedStateBackend(range, INCR.maxParallelism, Date.now) : new HeapKeyedStateBackend(range, INCR.maxParallelism, Date.now);
    restored.restore(snaps);
    const r = restored.getOrCreateState(descriptor, false);
    restored.setCurrentKey(INCR.keys - 1);
    if (r.value() === undefined) throw new Error('INVALID BENCHMARK: the restored state misses the last key');
    const restoreMs = performance.now() - t;
    // Every key has the value of its last update; every key is there.
    for (const k of [0, 1, Math.floor(INCR.keys / 2), INCR.keys - 1]) {
      restored.setCurrentKey(k);
      if (!String(r.value()).startsWith(`${String(k).padStart(11, '0')}/`)) throw new Error(`INVALID BENCHMARK: wrong value restored for key ${k}`);
    }
    const entries = restored.numEntries('payload');
    if (entries !== INCR.keys) throw new Error(`INVALID BENCHMARK: restored ${entries} entries, expected ${INCR.keys}`);
    restored.dispose();
    return { restoreMs, restoreReadMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(INCR_CHAIN_FILE, { force: true });
  }
}

stateBackendBenchmarks['incremental-checkpoint'] = {
  description: `${INCR.backend} backend, ${INCR.keys} keys x ${INCR.valueBytes}-byte values in one subtask, incremental checkpoints into filesystem storage: a full one, then ${INCR.rounds} rounds of ${INCR.updateFraction * 100}% of the keys updated + a checkpoint (set SLUICE_BENCH_INCREMENTAL_KEYS=10000000 for the 2 GB case); restore = in a fresh process, the chain read from storage and loaded into a fresh backend (full key groups loaded, deltas applied) until the first read`,
  parallelism: 1,
  headline: ['uploadedToChangedRatio', 'durationMsP50', 'durationMsP99', 'changelogDurationMsP99'],
  target: { uploadedToChangedRatio: '<= 2', changelogDurationMsP99: '<= 1000', restoreMs: '<= 30000' },
  config: { 'execution.checkpointing.incremental': true, 'state.backend.type': INCR.backend, ...INCR },
  steps: () => ['incremental', 'restore'],
  runStep: (step) => (step === 'restore' ? incrementalRestoreStep() : incrementalStep()),
  // 10M keys take about 9 minutes.
  stepTimeoutMs: 30 * 60_000,
  metrics: (samples) => {
    const s = { ...samples.incremental, ...samples.restore };
    const round = (x) => Math.round(x * 100) / 100;
    return Object.fromEntries(Object.entries(s).filter(([, v]) => typeof v === 'number').map(([k, v]) => [k, round(v)]));
  },
};
