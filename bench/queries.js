// Benchmark jobs: the Nexmark queries of bench/nexmark/ (nexmark-q0 ... nexmark-q22, on
// Sluice's generator, generated as they are read) and a keyed word count. Each function builds
// the job on an environment and returns the sink that counts its output.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiscardingSink, GeneratorSource } from '../dist/connectors/index.js';
import { lineAt } from './jobs/word-lines.js';
import { nexmarkQueries } from './nexmark/index.js';
import { buildNexmarkJob, generatedSource } from './nexmark/job.js';
import { writeSideInputFile } from './nexmark/events-file.js';

// Events per run: the stateless queries read more, the ones whose state grows with the input
// (regular joins, GROUP BYs without windows) fewer.
const EVENTS = { q0: 10_000_000, q10: 2_000_000, q1: 10_000_000, q2: 10_000_000, q13: 10_000_000, q14: 10_000_000, q21: 10_000_000, q22: 10_000_000 };
const DEFAULT_EVENTS = 4_000_000;

let sideInput;
/** q13's side input file, written once per process. */
function sideInputFile() {
  if (sideInput === undefined) {
    sideInput = join(mkdtempSync(join(tmpdir(), 'nexmark-side-')), 'side-input.tsv');
    writeSideInputFile(sideInput);
  }
  return sideInput;
}

let filesDir;
/** q10's output directory, made once per process and removed when it exits. */
function q10FilesDir() {
  if (filesDir === undefined) {
    filesDir = mkdtempSync(join(tmpdir(), 'nexmark-q10-'));
    process.on('exit', () => rmSync(filesDir, { recursive: true, force: true }));
  }
  return filesDir;
}

const optionsOf = (name) => (name === 'q13' ? { sideInput: sideInputFile() } : name === 'q10' ? { filesDir: q10FilesDir() } : {});

const nexmark = Object.fromEntries(
  Object.values(nexmarkQueries).map((q) => [
    `nexmark-${q.name}`,
    {
      events: EVENTS[q.name] ?? DEFAULT_EVENTS,
      // `nexmarkConfig`: generator settings (the checkpoint-overhead benchmarks set firstEventRate).
      build: (env, events, nexmarkConfig) =>
        buildNexmarkJob(env, q, generatedSource(events, nexmarkConfig), new DiscardingSink(), optionsOf(q.name)),
    },
  ]),
);

export const queries = {
  ...nexmark,
  // Nexmark q5 with keyed state in the on-disk backend (Sluice's is LMDB: docs/state.md; the
  // name is the one BENCH_FORMAT.md gives the on-disk backend's q5).
  'rocksdb-nexmark-q5': {
    events: 4_000_000,
    config: { 'state.backend.type': 'lmdb' },
    build: (env, events) => queries['nexmark-q5'].build(env, events),
  },
  wordcount: {
    events: 4_000_000,
    build: (env, events) => {
      const lines = new GeneratorSource({ count: events, generate: lineAt });
      return sink(
        env
          .fromSource(lines, 'lines')
          .flatMap((line, out) => {
            for (const w of line.split(' ')) out.collect([w, 1]);
          })
          .keyBy((t) => t[0])
          .reduce((a, b) => [a[0], a[1] + b[1]])
          .map((t) => t),
      );
    },
    // events counted are lines; every word updates its (word, count) tuple, as Flink's WordCount
  },
};

function sink(stream) {
  const s = new DiscardingSink();
  stream.sinkTo(s);
  return s;
}
