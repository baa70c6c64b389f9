import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Configuration, StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { CountPerKey, countReference } from './support/counting-job.js';

const localDir = mkdtempSync(join(tmpdir(), 'sluice-lmdb-test-'));
afterAll(() => rmSync(localDir, { recursive: true, force: true }));

describe('state.backend.type', () => {
  it('accepts hashmap and lmdb; rocksdb is refused with what to use instead', () => {
    expect(new Configuration([['state.backend.type', 'lmdb']]).getString('state.backend.type')).toBe('lmdb');
    expect(new Configuration([['state.backend.type', 'HashMap']]).getString('state.backend.type')).toBe('hashmap');
    expect(() => new Configuration([['state.backend.type', 'rocksdb']])).toThrow(/no RocksDB backend.*state.backend.type: lmdb/);
    expect(() => new Configuration([['state.backend.type', 'memory']])).toThrow(/expected one of hashmap, lmdb/);
    const env = StreamExecutionEnvironment.create().setStateBackend('lmdb');
    expect(env.config.getString('state.backend.type')).toBe('lmdb');
  });

  it('a keyed job on lmdb gives the same results as on the heap; its working directories are deleted at the end', async () => {
    const run = async (backend: 'hashmap' | 'lmdb'): Promise<string[]> => {
      const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2, 'state.backend.lmdb.localdir': localDir, 'state.backend.lmdb.cache-entries': 50 });
      env.setStateBackend(backend);
      const sink = new CollectSink<string>();
      env
        .fromSource(numberSource({ count: 6000 }), 'numbers')
        .keyBy((n) => n % 700)
        .process(new CountPerKey())
        .sinkTo(sink, 'collect');
      await env.execute();
      return [...sink.values].sort();
    };
    const onLmdb = await run('lmdb');
    expect(onLmdb).toEqual(countReference(6000, 700));
    expect(await run('hashmap')).toEqual(onLmdb);
    await expect.poll(() => readdirSync(localDir).length, { timeout: 5000 }).toBe(0);
  });
});

describe('lmdb state backend: state larger than the heap', () => {
  // 40 MB of old space left Node 24 too little room for the job itself (it ran out in 2 of 5 runs).
  it('a keyed job with a 64 MB old-space limit keeps 200 MB of state (in a child process)', () => {
    const script = join(import.meta.dirname, '..', 'bench', 'larger-than-heap.js');
    expect(existsSync(join(import.meta.dirname, '..', 'dist', 'index.js')), 'npm run build first (npm test does)').toBe(true);
    const r = spawnSync(process.execPath, ['--max-old-space-size=64', script, 'lmdb', '100000', '2000', localDir], { encoding: 'utf8', timeout: 240_000 });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { stateBytes: number; heapUsedBytes: number };
    expect(result.stateBytes).toBe(200_000_000);
    // Far above the old-space limit (V8's total heap limit adds the young generation, which differs between Node versions).
    expect(result.stateBytes).toBeGreaterThan(2.5 * 64 * 2 ** 20);
    expect(result.heapUsedBytes).toBeLessThan(result.stateBytes / 2);
  }, 300_000);
});
