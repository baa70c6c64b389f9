// A child process that runs Nexmark queries on command, one JSON line answering each (the
// protocol of bench/flink's Main.java and bench/nexmark/sluice-runner.js).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export class QueryProcess {
  /** The Sluice side: bench/nexmark/sluice-runner.js under `node` (default: this process's binary). */
  static sluice({ node = process.execPath, heapMb = 4096 } = {}) {
    const runner = join(dirname(fileURLToPath(import.meta.url)), 'sluice-runner.js');
    return new QueryProcess(spawn(node, [`--max-old-space-size=${heapMb}`, runner], { stdio: ['pipe', 'pipe', 'pipe'] }), 'Sluice');
  }

  constructor(child, name) {
    this.child = child;
    this.name = name;
    this.stderr = '';
    this.waiting = [];
    this.exited = undefined;
    child.stderr.on('data', (d) => {
      this.stderr = (this.stderr + d).slice(-20_000);
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return; // the engine's own prints
      this.waiting.shift()?.resolve(JSON.parse(line));
    });
    child.on('exit', (code, signal) => {
      this.exited = `the ${name} process exited (${signal ?? code}): ${this.stderr.slice(-4000)}`;
      for (const w of this.waiting.splice(0)) w.reject(new Error(this.exited));
    });
  }

  command(line) {
    if (this.exited !== undefined) return Promise.reject(new Error(this.exited));
    return new Promise((resolve, reject) => {
      this.waiting.push({
        resolve: (r) => (r.error === undefined ? resolve(r) : reject(new Error(`${this.name}: ${line}: ${r.error}`))),
        reject,
      });
      this.child.stdin.write(line + '\n');
    });
  }

  /** Preloads the events of an events file (bench/nexmark/events-file.js). */
  load(eventsFile) {
    return this.command(`load ${eventsFile}`);
  }

  /**
   * Runs a query. `output`: a file for its normalized lines (Flink only), 'digest' for their
   * digest, none for the timed run into a counting sink. `filesDir`: where q10 writes its files.
   */
  run(query, parallelism, { sideInput, output, filesDir } = {}) {
    return this.command(`run ${query} ${parallelism} ${sideInput ?? '-'} ${output ?? '-'} ${filesDir ?? '-'}`);
  }

  async stop() {
    if (this.exited !== undefined) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end('quit\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
