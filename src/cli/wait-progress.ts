const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Progress while a command waits for the job (a savepoint, a stop, a checkpoint): on a
 * terminal a spinner with the elapsed time, redrawn in place; otherwise (logs, pipes) the
 * start line, then one line every `plainEveryMs`.
 */
export class WaitProgress {
  private timer: NodeJS.Timeout | undefined;
  private readonly startedMs = performance.now();
  private frame = 0;
  private lastPlainMs = 0;

  constructor(
    private readonly what: string,
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly plainEveryMs = 5000,
  ) {
    if (out.isTTY === true) {
      this.draw();
      this.timer = setInterval(() => this.draw(), 100);
      this.timer.unref();
    } else {
      out.write(`${what}...\n`);
      this.timer = setInterval(() => this.plain(), 1000);
      this.timer.unref();
    }
  }

  private elapsed(): string {
    return `${((performance.now() - this.startedMs) / 1000).toFixed(1)} s`;
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.out.write(`\r\x1b[2K${FRAMES[this.frame]} ${this.what} (${this.elapsed()})`);
  }

  private plain(): void {
    const now = performance.now() - this.startedMs;
    if (now - this.lastPlainMs < this.plainEveryMs) return;
    this.lastPlainMs = now;
    this.out.write(`  still waiting (${this.elapsed()})\n`);
  }

  /** Stops the spinner; prints how long it took. */
  stop(outcome: 'done' | 'failed'): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    const line = `${this.what}: ${outcome} after ${this.elapsed()}`;
    this.out.write(this.out.isTTY === true ? `\r\x1b[2K${line}\n` : `${line}\n`);
  }
}
