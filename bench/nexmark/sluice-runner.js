// The Sluice side of `npm run bench -- --vs flink`: bench/flink's Main in JavaScript, a process
// that preloads the events once and runs queries in-process one after the other (the same
// commands on stdin, one JSON line on stdout each):
//   load <events file>
//   run <query> <parallelism> <side input file|-> <digest|-> [<q10's files directory>]
//       `digest`: the digest of the output lines (events-file.js LinesDigest); `-`: into a
//       DiscardingSink, the timed run
//   quit
import { createInterface } from 'node:readline';
import { StreamExecutionEnvironment } from 'sluice';
import { DiscardingSink } from 'sluice/connectors';
import { LinesDigest, readEventsFile } from './events-file.js';
import { nexmarkQueries } from './index.js';
import { buildNexmarkJob, preloadedSource } from './job.js';

let events = [];

class DigestSink {
  digest = new LinesDigest();
  constructor(format) {
    this.format = format;
  }
  createWriter() {
    return {
      write: (r) => {
        this.digest.add(this.format(r));
      },
    };
  }
}

async function run(name, parallelism, sideInput, output, filesDir) {
  const query = nexmarkQueries[name];
  if (query === undefined) throw new Error(`unknown query ${name}; known: ${Object.keys(nexmarkQueries).join(', ')}`);
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': parallelism });
  const sink = output === 'digest' ? new DigestSink(query.format) : new DiscardingSink();
  buildNexmarkJob(env, query, preloadedSource(events), sink, { ...(sideInput === undefined ? {} : { sideInput }), ...(filesDir === undefined ? {} : { filesDir }) });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await env.execute(`nexmark-${name}`);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    query: name,
    parallelism,
    events: events.length,
    seconds,
    eventsPerSecond: Math.round(events.length / seconds),
    outputRecords: output === 'digest' ? sink.digest.count : sink.count,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    ...(output === 'digest' ? { digest: sink.digest.toString() } : {}),
  };
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const cmd = line.trim().split(' ');
  try {
    if (cmd[0] === 'load') {
      const t0 = performance.now();
      events = readEventsFile(cmd[1]);
      console.log(JSON.stringify({ loaded: events.length, ms: Math.round(performance.now() - t0) }));
    } else if (cmd[0] === 'run') {
      const r = await run(cmd[1], Number(cmd[2]), cmd[3] === '-' ? undefined : cmd[3], cmd[4], cmd[5] === undefined || cmd[5] === '-' ? undefined : cmd[5]);
      console.log(JSON.stringify(r));
    } else if (cmd[0] === 'quit') break;
    else throw new Error(`unknown command '${cmd[0]}' (load, run, quit)`);
  } catch (e) {
    console.log(JSON.stringify({ error: String(e?.stack ?? e) }));
  }
}
process.exit(0);
