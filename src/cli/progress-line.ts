import type { JobProgress } from '../runtime/local-executor.js';

function rate(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

/** A live line on stderr: records/s in and out, and the current watermark. */
export class ProgressLine {
  private timer: NodeJS.Timeout | undefined;
  private last: { atMs: number; p: JobProgress } | undefined;
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly sample: () => JobProgress,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.last = { atMs: performance.now(), p: this.sample() };
    this.timer = setInterval(() => this.print(), this.intervalMs);
    this.timer.unref();
  }

  private print(): void {
    const now = performance.now();
    const p = this.sample();
    const prev = this.last!;
    const seconds = (now - prev.atMs) / 1000;
    this.last = { atMs: now, p };
    const inRate = (p.sourceRecords - prev.p.sourceRecords) / seconds;
    const outRate = (p.sinkRecords - prev.p.sinkRecords) / seconds;
    const wm = p.watermarkMs === undefined ? '-' : p.watermarkMs >= Number.MAX_SAFE_INTEGER ? 'end' : new Date(p.watermarkMs).toISOString();
    const text = `sources ${rate(inRate)} rec/s (${p.sourceRecords} total) | sinks ${rate(outRate)} rec/s | watermark ${wm} | ${p.runningTasks} tasks running`;
    process.stderr.write(this.tty ? `\r\x1b[2K${text}` : `${text}\n`);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty) process.stderr.write('\n');
  }
}
