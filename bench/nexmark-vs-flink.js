// `npm run bench -- --vs flink [--only nexmark-q5,...] [--runs 3] [--events 3000000] [--rate 100000]
//   [--parallelism 1,2] [--warmup 1]`: every Nexmark query of bench/nexmark on Sluice and on
// Apache Flink 2.3 (bench/flink), on the same events, and their ratio.
//
//   1. Sluice's generator writes the events once into a file (events-file.js; --rate is the
//      generator's firstEventRate: how much event time they span).
//   2. Two processes preload them: bench/nexmark/sluice-runner.js (Node) and bench/flink's Main
//      (one JVM, one local Flink cluster); each then runs queries on command, in memory.
//   3. Per query and parallelism: --warmup runs on each side first (the first also checks the
//      outputs: both sides' digests of their normalized output lines must be equal), then --runs
//      timed runs, alternating which side goes first; the figure of each side is the median.
// Writes bench/results/nexmark-qN-vs-flink.json (BENCH_FORMAT.md) and prints a table.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlinkRunner } from './flink/flink-runner.js';
import { writeEventsFile, writeSideInputFile } from './nexmark/events-file.js';
import { nexmarkQueries } from './nexmark/index.js';
import { QueryProcess } from './nexmark/query-process.js';

const here = dirname(fileURLToPath(import.meta.url));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function runVsFlink({ only, runs = 3, events = 3_000_000, rate = 100_000, parallelisms = [1, 2], warmup = 1, node = process.execPath, nodeVersion = process.version }) {
  const names = Object.keys(nexmarkQueries).filter((q) => only === undefined || only.includes(q) || only.includes(`nexmark-${q}`));
  if (only !== undefined) {
    for (const n of only) if (!names.includes(n.replace(/^nexmark-/, ''))) throw new Error(`--vs flink: unknown query '${n}'; known: ${Object.keys(nexmarkQueries).map((q) => `nexmark-${q}`).join(', ')}`);
  }
  if (!(warmup >= 1)) throw new Error('--warmup must be at least 1 (the first warm-up run checks the outputs)');
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
  } catch {}

  const dir = mkdtempSync(join(tmpdir(), 'nexmark-vs-flink-'));
  const eventsFile = join(dir, 'events.tsv');
  const sideInput = join(dir, 'side-input.tsv');
  console.error(`writing ${events.toLocaleString('en-US')} Nexmark events (firstEventRate ${rate}/s) to ${eventsFile}`);
  await writeEventsFile(eventsFile, events, { firstEventRate: rate });
  writeSideInputFile(sideInput);

  const flink = FlinkRunner.start({ heap: '4g' });
  const sluice = QueryProcess.sluice({ node });
  const rows = [];
  try {
    const [sl, fl] = await Promise.all([sluice.load(eventsFile), flink.load(eventsFile)]);
    console.error(`preloaded: Sluice ${sl.loaded} events in ${sl.ms} ms, Flink ${fl.loaded} in ${fl.ms} ms`);
    mkdirSync(join(here, 'results'), { recursive: true });
    for (const name of names) {
      const q = nexmarkQueries[name];
      const metrics = {};
      const perParallelism = {};
      for (const p of parallelisms) {
        const suffix = p === 1 ? '' : `Parallelism${p}`;
        // Warm-up runs; the first compares the outputs.
        let identical;
        // q10 writes files: into a fresh directory each run, removed after it.
        const runOn = async (side, options) => {
          const filesDir = name === 'q10' ? mkdtempSync(join(dir, `q10-${side === sluice ? 'sluice' : 'flink'}-`)) : undefined;
          try {
            return await side.run(name, p, { sideInput, filesDir, ...options });
          } finally {
            if (filesDir !== undefined) rmSync(filesDir, { recursive: true, force: true });
          }
        };
        for (let i = 0; i < warmup; i++) {
          const s = await runOn(sluice, { output: i === 0 ? 'digest' : undefined });
          const f = await runOn(flink, { output: i === 0 ? 'digest' : undefined });
          if (i === 0) identical = q.nondeterministic === undefined ? s.digest === f.digest : null;
          if (i === 0 && identical === false) console.error(`${name} p=${p}: outputs differ (Sluice ${s.digest}, Flink ${f.digest}: count:hash:hash)`);
        }
        const samples = { sluice: [], flink: [] };
        for (let i = 0; i < runs; i++) {
          const order = i % 2 === 0 ? ['sluice', 'flink'] : ['flink', 'sluice'];
          for (const side of order) samples[side].push(await runOn(side === 'sluice' ? sluice : flink, {}));
        }
        const s = median(samples.sluice.map((r) => r.eventsPerSecond));
        const f = median(samples.flink.map((r) => r.eventsPerSecond));
        const sCpu = median(samples.sluice.map((r) => events / r.cpuSeconds));
        const fCpu = median(samples.flink.map((r) => events / r.cpuSeconds));
        metrics[`eventsPerSecond${suffix}`] = Math.round(s);
        metrics[`flinkEventsPerSecond${suffix}`] = Math.round(f);
        metrics[`ratioVsFlink${suffix}`] = Math.round((s / f) * 1000) / 1000;
        metrics[`eventsPerCpuSecond${suffix}`] = Math.round(sCpu);
        metrics[`flinkEventsPerCpuSecond${suffix}`] = Math.round(fCpu);
        metrics[`ratioVsFlinkPerCpuSecond${suffix}`] = Math.round((sCpu / fCpu) * 1000) / 1000;
        metrics[`outputsIdentical${suffix}`] = identical;
        perParallelism[p] = { sluice: samples.sluice, flink: samples.flink };
        rows.push({ name, p, s, f, sCpu, fCpu, identical });
      }
      const result = {
        name: `nexmark-${name}-vs-flink`,
        metrics,
        parallelism: parallelisms[0],
        parallelisms,
        runs,
        aggregate: 'median',
        node: nodeVersion,
        flink: '2.3.0',
        commit,
        at: new Date().toISOString(),
        description: `Nexmark ${name} (${q.title}) on Sluice and Flink 2.3, ${events} preloaded events (firstEventRate ${rate}/s), ${warmup} warm-up run(s) each side`,
        ...(q.nondeterministic === undefined ? {} : { nondeterministic: q.nondeterministic }),
        perRun: perParallelism,
      };
      writeFileSync(join(here, 'results', `nexmark-${name}-vs-flink.json`), JSON.stringify(result, null, 2) + '\n');
      console.error(`nexmark-${name} vs flink: done`);
    }
  } finally {
    await Promise.all([sluice.stop(), flink.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }

  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  console.log(`\n${'query'.padEnd(14)} ${'p'.padStart(2)} ${'Sluice ev/s'.padStart(12)} ${'Flink ev/s'.padStart(12)} ${'ratio'.padStart(7)} ${'ratio/cpu-s'.padStart(11)}  identical   (median of ${runs}, ${events} events)`);
  for (const r of rows) {
    const same = r.identical === null ? 'n/a (' + 'nondeterministic)' : r.identical ? 'yes' : 'NO';
    console.log(`${('nexmark-' + r.name).padEnd(14)} ${String(r.p).padStart(2)} ${fmt(r.s).padStart(12)} ${fmt(r.f).padStart(12)} ${(r.s / r.f).toFixed(2).padStart(7)} ${(r.sCpu / r.fCpu).toFixed(2).padStart(11)}  ${same}`);
  }
  return rows;
}
