// A keyed job whose state is larger than the Node heap it runs with.
//
// usage: node --max-old-space-size=64 bench/larger-than-heap.js <hashmap|lmdb> <keys> <valueBytes> [localDir]
//
// Every key gets a value of <valueBytes> bytes, written twice: the second write checks that
// the first one is still there (so lost or corrupted state fails the job), so the state is
// keys * valueBytes bytes. Prints one JSON line: backend, keys, stateBytes, seconds, heap use.
// With `hashmap` and a state far above the heap limit the process dies of heap exhaustion;
// with `lmdb` it finishes. test/lmdb-state-backend.test.ts runs a short version.
import { StreamExecutionEnvironment, valueState } from '../dist/index.js';
import { DiscardingSink, numberSource } from '../dist/connectors/index.js';

const [backend = 'lmdb', keysText = '300000', valueBytesText = '1000', localDir] = process.argv.slice(2);
const keys = Number(keysText);
const valueBytes = Number(valueBytesText);

/** The value of a key: deterministic from the key and the round, exactly valueBytes long. */
function payload(key, round) {
  const head = `${key}/${round}/`;
  return head + 'x'.repeat(Math.max(0, valueBytes - head.length));
}

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
    if (round === 1) out.collect(key);
  }
}

const config = { 'parallelism.default': 1, 'state.backend.type': backend, 'state.backend.lmdb.cache-entries': 2000 };
if (localDir !== undefined) config['state.backend.lmdb.localdir'] = localDir;
const env = StreamExecutionEnvironment.create(config);
env
  .fromSource(numberSource({ count: 2 * keys }), 'numbers')
  .keyBy((i) => i % keys)
  .process(new WriteTwice())
  .sinkTo(new DiscardingSink(), 'discard');
const started = performance.now();
await env.execute('larger-than-heap');
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
  }) + '\n',
);
