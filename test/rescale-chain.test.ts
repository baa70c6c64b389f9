import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { LocalExecutor } from '../src/runtime/local-executor.js';
import { seededRandom } from '../src/testing/seeded-random.js';
import { countingPipeline, countReference } from './support/counting-job.js';
import { latestCheckpoint, tempDirs } from './support/temp-dirs.js';
import { compareMultisets } from './support/txn-store-sink.js';

// A job canceled and restored from its retained checkpoint again and again, each time at
// another parallelism picked from a seed (sources, keyed state and the sink's pending
// transactions all redistributed), must still write every count exactly once. One output
// directory for the whole chain; the reference is computed independently. (A reader given
// several splits at different positions is covered deterministically by
// src/connectors/generator/generator-source.test.ts: here their positions differ by chance.)

const KEYS = 13;
const RECORDS = 30_000;
const HOPS = 4;

const tempDir = tempDirs('sluice-rescale-');
/** Not a configuration option: the variants' key for the source's split assignment. */
const SPLITS = '(source splits)';

const VARIANTS: Record<string, Record<string, string | number | boolean>> = {
  'hashmap, full checkpoints': {},
  'hashmap, incremental': { 'execution.checkpointing.incremental': true },
  'lmdb, incremental': { 'state.backend.type': 'lmdb', 'execution.checkpointing.incremental': true },
  'hashmap, unaligned': { 'execution.checkpointing.unaligned.enabled': true },
  'hashmap, changelog': { 'state.backend.changelog.enabled': true, 'state.changelog.dstl.dfs.batch.persist-delay': 5, 'state.backend.changelog.periodic-materialize.interval': 60 },
  // Ranges of the numbers handed out on request: the enumerator's unassigned ranges are in
  // every checkpoint beside the readers' own.
  'hashmap, splits on request': { [SPLITS]: 'on-request' },
  // The source switches between static and on-request assignment from run to run: restored
  // into a static source, the ranges the enumerator had not handed out are dealt out; restored
  // into an on-request one, the strided splits of the static run keep their stride.
  'hashmap, splits on request and static in turn': { [SPLITS]: 'alternate' },
};

function splitAssignment(variant: Record<string, string | number | boolean>, hop: number): 'static' | 'on-request' {
  const v = variant[SPLITS];
  return v === 'on-request' || (v === 'alternate' && hop % 2 === 1) ? 'on-request' : 'static';
}

function job(parallelism: number, checkpoints: string, out: string, variant: Record<string, string | number | boolean>, hop: number) {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': parallelism,
    'execution.checkpointing.interval': 30,
    'execution.checkpointing.dir': checkpoints,
    'execution.checkpointing.externalized-checkpoint-retention': 'RETAIN_ON_CANCELLATION',
    'execution.checkpointing.num-retained': 2,
    ...Object.fromEntries(Object.entries(variant).filter(([k]) => k !== SPLITS)),
  });
  countingPipeline(env, { records: RECORDS, eventsPerSecond: 20_000, keys: KEYS, out, splitAssignment: splitAssignment(variant, hop) });
  return env;
}

describe('rescaling through a chain of restores', () => {
  // One seed per variant, the two seeds in turn (CI time: the whole run stays under 30 minutes
  // on a slow machine); SLUICE_SEED runs every variant with another seed.
  const seeds = [7101, 7103];
  for (const [v, [name, variant]] of Object.entries(VARIANTS).entries()) {
    for (const seed of process.env.SLUICE_SEED === undefined ? [seeds[v % 2]!] : [Number(process.env.SLUICE_SEED)]) {
      it(`${name} (seed ${seed}): ${HOPS} runs at seeded parallelisms, each canceled after seeded checkpoints and restored from its last, write every count once`, { timeout: 60_000 }, async () => {
        const random = seededRandom(seed);
        const checkpoints = tempDir();
        const out = tempDir();
        let restoreFrom: string | undefined;
        // The source's splits are made at the first parallelism (4); the last run has fewer
        // subtasks, so some of its readers take several splits, at different positions.
        let parallelism = 4;
        const path: string[] = [];
        let finished = false;
        for (let hop = 0; hop < HOPS && !finished; hop++) {
          const env = job(parallelism, checkpoints, out, variant, hop);
          const executor = new LocalExecutor(env.getJobGraph(), env.config, {
            log: () => {},
            ...(restoreFrom === undefined ? {} : { restoreFrom: { path: restoreFrom, allowNonRestoredState: false } }),
          });
          const done = executor.run();
          let ended = false;
          void done.then(
            () => (ended = true),
            () => (ended = true),
          );
          if (hop === HOPS - 1) {
            expect((await done).status, `seed ${seed}: ${path.join(' -> ')}`).toBe('FINISHED');
            finished = true;
          } else {
            const wanted = 1 + Math.floor(random() * 3);
            while (!ended && executor.checkpointStats.counts.completed < wanted) await new Promise((r) => setTimeout(r, 3));
            if (ended) {
              // The run read all its records before the seeded number of checkpoints: the chain ends here.
              expect((await done).status, `seed ${seed}: ${path.join(' -> ')}`).toBe('FINISHED');
              finished = true;
            } else {
              executor.cancel();
              expect((await done).status, `seed ${seed}: ${path.join(' -> ')}`).toBe('CANCELED');
              restoreFrom = latestCheckpoint(checkpoints, executor.jobId);
              expect(restoreFrom, `seed ${seed}: a retained checkpoint of run ${hop}`).toBeDefined();
            }
          }
          path.push(`p${parallelism}`);
          let next = parallelism;
          const highest = hop === HOPS - 2 ? 2 : 4;
          while (next === parallelism) next = 1 + Math.floor(random() * highest);
          parallelism = next;
        }
        const committed = await readCommittedLines(out);
        expect(compareMultisets(committed, countReference(RECORDS, KEYS)), `seed ${seed}, ${name}: parallelisms ${path.join(' -> ')}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
      });
    }
  }
});
