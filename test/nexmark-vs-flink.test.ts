// Sluice's Nexmark queries (bench/nexmark) against the same queries on Apache Flink 2.3
// (bench/flink, Maven Central's jars, built once into .cache/flink-nexmark/): on the same 4,000
// events, the normalized, sorted output of every deterministic query must be identical (q10's
// files too, by partition), Sluice at parallelism 1 and 2, Flink at 2. One JVM runs every Flink
// job in turn (one MiniCluster).
// The events span 20 s of event time across a midnight (UTC), so windows close, the statistics
// reports see two days and q14 sees night hours.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlinkRunner } from '../bench/flink/flink-runner.js';
import { readEventsFile, writeEventsFile, writeSideInputFile } from '../bench/nexmark/events-file.js';
import { nexmarkQueries } from '../bench/nexmark/index.js';
import { runToLines } from '../bench/nexmark/job.js';
import type { QueryProcess } from '../bench/nexmark/query-process.js';
import type { NexmarkEvent } from '../src/connectors/index.js';

const EVENTS = 4_000;
const CONFIG = { firstEventRate: 200, baseTimeMs: Date.UTC(2026, 0, 1) - 10_000 };

/** Queries whose output is not the same from run to run, so not compared (each says why). */
const NOT_COMPARED: Record<string, string> = {
  q12: 'windows of processing time: which bids share a window depends on when each is processed',
};

let dir: string;
let flink: QueryProcess;
let events: NexmarkEvent[];
const eventsFile = () => join(dir, 'events.tsv');
const sideInput = () => join(dir, 'side-input.tsv');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nexmark-vs-flink-'));
  await writeEventsFile(eventsFile(), EVENTS, CONFIG);
  writeSideInputFile(sideInput());
  events = readEventsFile(eventsFile());
  // The first run on a machine builds bench/flink with Maven (~45 s; Flink's jars from Maven Central).
  flink = FlinkRunner.start({ heap: '1g', log: () => {} });
  await flink.load(eventsFile());
}, 300_000);

afterAll(async () => {
  await flink?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('Nexmark on Sluice and on Flink: identical outputs', () => {
  const deterministic = Object.values(nexmarkQueries).filter((q) => q.nondeterministic === undefined);

  it('lists every query that is not compared, with the reason', () => {
    const missing = Array.from({ length: 23 }, (_, i) => `q${i}`).filter((name) => nexmarkQueries[name] === undefined);
    const nondeterministic = Object.values(nexmarkQueries).filter((q) => q.nondeterministic !== undefined).map((q) => q.name);
    expect([...missing, ...nondeterministic].sort()).toEqual(Object.keys(NOT_COMPARED).sort());
    for (const name of nondeterministic) expect(nexmarkQueries[name]!.nondeterministic).toBe(NOT_COMPARED[name]);
  });

  for (const q of deterministic) {
    it(`${q.name} (${q.title})`, async () => {
      // q10 writes files too: each side into its own directory, compared below.
      const filesDir = (side: string) => (q.name === 'q10' ? join(dir, `q10-${side}`) : undefined);
      const options = { sideInput: sideInput() };
      const outputFile = join(dir, `flink-${q.name}.txt`);
      const r = await flink.run(q.name, 2, { ...options, output: outputFile, filesDir: filesDir('flink') });
      const onFlink = readFileSync(outputFile, 'utf8').split('\n').filter((l) => l !== '').sort();
      expect(onFlink.length).toBe(r.outputRecords);
      // Every query has output on these events: an empty result on both sides proves nothing.
      expect(onFlink.length).toBeGreaterThan(0);
      for (const parallelism of [1, 2]) {
        const onSluice = (await runToLines(q, events, parallelism, { ...options, filesDir: filesDir(`sluice-${parallelism}`) })).sort();
        expect({ parallelism, lines: onSluice.length }).toEqual({ parallelism, lines: onFlink.length });
        const firstDifference = onSluice.findIndex((line, i) => line !== onFlink[i]);
        expect({ parallelism, firstDifference, sluice: onSluice[firstDifference], flink: onFlink[firstDifference] }).toEqual({
          parallelism,
          firstDifference: -1,
          sluice: undefined,
          flink: undefined,
        });
      }
      if (q.name === 'q10') {
        // The same lines in the same partitions; which part file holds a line is each engine's own.
        const flinkFiles = partitionLines(filesDir('flink')!);
        expect(Object.values(flinkFiles).flat().length).toBe(onFlink.length);
        expect(partitionLines(filesDir('sluice-1')!)).toEqual(flinkFiles);
        expect(partitionLines(filesDir('sluice-2')!)).toEqual(flinkFiles);
      }
    }, 120_000);
  }
});

/** The sorted lines of every partition directory (dt=.../hm=...) under `root`, whatever the part files are called. */
function partitionLines(root: string): Record<string, string[]> {
  const byPartition: Record<string, string[]> = {};
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const partition = relative(root, entry.parentPath);
    const lines = readFileSync(join(entry.parentPath, entry.name), 'utf8').split('\n').filter((l) => l !== '');
    (byPartition[partition] ??= []).push(...lines);
  }
  for (const lines of Object.values(byPartition)) lines.sort();
  return byPartition;
}
