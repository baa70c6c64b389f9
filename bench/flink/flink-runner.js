// One JVM running bench/flink's Main: queries on Flink's local environment, one after the other,
// on events it preloads once (see Main.java for the commands).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { flinkClasspath } from './build.js';

export class FlinkRunner {
  /** Starts the JVM (building bench/flink first if its cache misses). */
  static start({ heap = '3g', log } = {}) {
    const classpath = flinkClasspath({ log });
    const jvm = spawn('java', [`-Xmx${heap}`, `-Xms${heap}`, '-XX:+UseParallelGC', '-cp', classpath, 'sluice.bench.flink.Main'], { stdio: ['pipe', 'pipe', 'pipe'] });
    return new FlinkRunner(jvm);
  }

  constructor(jvm) {
    this.jvm = jvm;
    this.stderr = '';
    this.waiting = [];
    this.exited = undefined;
    jvm.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d).slice(-20_000);
    });
    createInterface({ input: jvm.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return; // Flink's own prints
      this.waiting.shift()?.resolve(JSON.parse(line));
    });
    jvm.on('exit', (code, signal) => {
      this.exited = `the Flink JVM exited (${signal ?? code}): ${this.stderr.slice(-4000)}`;
      for (const w of this.waiting.splice(0)) w.reject(new Error(this.exited));
    });
  }

  command(line) {
    if (this.exited !== undefined) return Promise.reject(new Error(this.exited));
    return new Promise((resolve, reject) => {
      this.waiting.push({
        resolve: (r) => (r.error === undefined ? resolve(r) : reject(new Error(`Flink: ${line}: ${r.error}`))),
        reject,
      });
      this.jvm.stdin.write(line + '\n');
    });
  }

  /** Preloads the events of an events file (bench/nexmark/events-file.js). */
  load(eventsFile) {
    return this.command(`load ${eventsFile}`);
  }

  /** Runs a query: with `outputFile`, its normalized lines go there; without, into a counting sink (timed). */
  run(query, parallelism, { sideInput, outputFile } = {}) {
    return this.command(`run ${query} ${parallelism} ${sideInput ?? '-'} ${outputFile ?? '-'}`);
  }

  async stop() {
    if (this.exited !== undefined) return;
    const exited = new Promise((resolve) => this.jvm.once('exit', resolve));
    this.jvm.stdin.end('quit\n');
    const timer = setTimeout(() => this.jvm.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
