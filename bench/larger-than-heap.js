// A keyed job whose state is larger than the Node heap it runs with.
//
// usage: node --max-old-space-size=64 bench/larger-than-heap.js <hashmap|lmdb> <keys> <valueBytes> [localDir] [checkpointDir]
//
// Every key gets a value of <valueBytes> bytes, written twice: the second write checks that
// the first one is still there (so lost or corrupted state fails the job), so the state is
// keys * valueBytes bytes. Prints one JSON line: backend, keys, stateBytes, seconds, heap use.
// With `hashmap` and a state far above the heap limit the process dies of heap exhaustion;
// with `lmdb` it finishes. test/lmdb-state-backend.test.ts runs a short version.
//
// With a checkpointDir, the state goes through full snapshots between the two writes: the
// first job writes every key (round 0) and checkpoints every second into checkpointDir; once
// every key is written it takes one more (full) checkpoint and stops with a savepoint into
// checkpointDir/savepoints. A second job restores from that savepoint and writes round 1,
// checking every key's value from round 0. The JSON line adds the savepoint, the checkpoints
// completed, the largest checkpoint's size and the peak of array buffer memory (where
// snapshot bytes live: V8's old-space limit does not count them) while the first job ran
// (`snapshotPeakArrayBuffersBytes`) and while the second restored and ran
// (`restorePeakArrayBuffersBytes`), sampled every 5 ms.
import { StreamExecutionEnvironment, valueState } from '../dist/index.js';
import { DiscardingSink, numberSource } from '../dist/connectors/index.js';
import { LocalExecutor } from '../dist/runtime/local-executor.js';

const [backend = 'lmdb', keysText = '300000', valueBytesText = '1000', localDir, checkpointDir] = process.argv.slice(2);
const keys = Number(keysText);
const valueBytes = Number(valueBytesText);

/** The value of a key: deterministic from the key and the round, exactly valueBytes long. */
function payload(key, round) {
  const head = `${key}/${round}/`;
  return head + 'x'.repeat(Math.max(0, valueBytes - head.length));
}

/** Records the first job has written (the job runs in this process). */
let written = 0;

class WriteTwice {
  open(ctx) {
    this.state = ctx.getState(valueState('payload'));
  }
  processElement(i, ctx, out) {
    const key = ctx.getCurrentKey();
    const round = Math.floor(i / keys);
    const previous = this.state.value();
    const expected = round === 0 ? undefined : payload(key, round - 1);
    if (previous !== expected) {
      throw new Error(`key ${key} round ${round}: state holds ${previous === undefined ? 'nothing' : JSON.stringify(previous.slice(0, 40))}, expected ${expected === undefined ? 'nothing' : JSON.stringify(expected.slice(0, 40))}`);
    }
    this.state.update(payload(key, round));
    written++;
    if (round === 1) out.collect(key);
  }
}

/** The numbers from, ..., from + count - 1; then it waits to be stopped (a job that keeps running until its savepoint). */
function rangeThenIdle(from, count) {
  return {
    boundedness: 'unbounded',
    createSplits: () => [{ next: from }],
    createReader: () => {
      let split;
      return {
        addSplits(splits) {
          if (splits.length > 0) split = { next: splits[0].next };
        },
        noMoreSplits() {},
        pollNext(out) {
          if (split === undefined) return 'end';
          if (split.next >= from + count) return 'nothing';
          out.collect(split.next++);
          return 'more';
        },
        isAvailable: () => new Promise((r) => setTimeout(r, 20)),
        snapshotState: () => (split === undefined ? [] : [{ next: split.next }]),
      };
    },
  };
}

const config = { 'parallelism.default': 1, 'state.backend.type': backend, 'state.backend.lmdb.cache-entries': 2000 };
if (localDir !== undefined) config['state.backend.lmdb.localdir'] = localDir;
if (checkpointDir !== undefined) {
  config['execution.checkpointing.interval'] = '1s';
  config['execution.checkpointing.dir'] = checkpointDir;
}

/** The job: `source` keyed by number modulo keys, each key written twice. */
function job(source, uid) {
  const env = StreamExecutionEnvironment.create(config);
  env
    .fromSource(source, uid)
    .uid(uid)
    .keyBy((i) => i % keys)
    .process(new WriteTwice())
    .uid('write-twice')
    .sinkTo(new DiscardingSink(), 'discard');
  return env;
}

/** Peak of process.memoryUsage().arrayBuffers while `run` runs, sampled every 5 ms. */
async function withArrayBufferPeak(run) {
  let peak = process.memoryUsage().arrayBuffers;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 5);
  try {
    const result = await run();
    return { result, peak: Math.max(peak, process.memoryUsage().arrayBuffers) };
  } finally {
    clearInterval(sampler);
  }
}

const started = performance.now();
const extra = {};
if (checkpointDir === undefined) {
  await job(numberSource({ count: 2 * keys }), 'numbers').execute('larger-than-heap');
} else {
  const log = (m) => process.stderr.write(`${m}\n`);
  const first = job(rangeThenIdle(0, keys), 'round-0');
  const writer = new LocalExecutor(first.getJobGraph('larger-than-heap: write'), first.config, { log });
  const snapshots = await withArrayBufferPeak(async () => {
    const running = writer.run();
    while (written < keys) await new Promise((r) => setTimeout(r, 20));
    await writer.triggerCheckpoint(true);
    const savepoint = await writer.stopWithSavepoint(`${checkpointDir}/savepoints`);
    const result = await running;
    if (result.status !== 'FINISHED') throw new Error(`the writing job ended ${result.status}`);
    return savepoint.pointer;
  });
  const checkpoints = writer.checkpointStats.entries().filter((e) => e.status === 'COMPLETED');
  const second = job(numberSource({ from: keys, count: keys }), 'round-1');
  const checker = new LocalExecutor(second.getJobGraph('larger-than-heap: check'), second.config, {
    log,
    restoreFrom: { path: snapshots.result, allowNonRestoredState: true },
  });
  const restore = await withArrayBufferPeak(() => checker.run());
  if (restore.result.status !== 'FINISHED') throw new Error(`the checking job ended ${restore.result.status}`);
  Object.assign(extra, {
    savepoint: snapshots.result,
    completedCheckpoints: checkpoints.length,
    checkpointStateBytesMax: Math.max(0, ...checkpoints.map((e) => e.stateSizeBytes)),
    snapshotPeakArrayBuffersBytes: snapshots.peak,
    restorePeakArrayBuffersBytes: restore.peak,
  });
}
const mem = process.memoryUsage();
process.stdout.write(
  JSON.stringify({
    backend,
    keys,
    stateBytes: keys * valueBytes,
    seconds: (performance.now() - started) / 1000,
    heapUsedBytes: mem.heapUsed,
    heapLimitBytes: (await import('node:v8')).getHeapStatistics().heap_size_limit,
    rssBytes: mem.rss,
    ...extra,
  }) + '\n',
);
