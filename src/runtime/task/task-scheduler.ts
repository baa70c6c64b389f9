/** A unit of work the scheduler runs: one subtask's loop. */
export interface Schedulable {
  /** Runs for a bounded amount of work; returns true if it should run again soon. */
  runSlice(): boolean;
  scheduled: boolean;
}

/**
 * Runs the subtasks of one process on its single thread, round-robin. A subtask is queued
 * when something it waits for arrives (input, room in an output, mail); between rounds the
 * event loop gets a turn for I/O and timers.
 */
export class TaskScheduler {
  private ready: Schedulable[] = [];
  private pending = false;
  private running = false;
  private readonly roundBudgetMs: number;

  /**
   * `roundBudgetMs`: passes over the ready subtasks continue in one event-loop turn until this
   * long has passed (0: one pass per turn, as a TaskManager does so that network input is read
   * between passes). `afterSlice` runs after every slice (a TaskManager writes out the network frames the slice
   * left corked, so that they do not wait for the slices after it).
   */
  constructor(roundBudgetMs = 5, private readonly afterSlice: () => void = () => {}) {
    this.roundBudgetMs = roundBudgetMs;
  }

  wake(task: Schedulable): void {
    if (task.scheduled) return;
    task.scheduled = true;
    this.ready.push(task);
    if (!this.pending && !this.running) {
      this.pending = true;
      setImmediate(this.loop);
    }
  }

  private readonly loop = (): void => {
    this.pending = false;
    this.running = true;
    const deadline = performance.now() + this.roundBudgetMs;
    try {
      while (this.ready.length > 0) {
        const round = this.ready;
        this.ready = [];
        for (const task of round) {
          task.scheduled = false;
          const again = task.runSlice();
          this.afterSlice();
          if (again) this.wake(task);
        }
        if (performance.now() > deadline) break;
      }
    } finally {
      this.running = false;
    }
    if (this.ready.length > 0 && !this.pending) {
      this.pending = true;
      setImmediate(this.loop);
    }
  };
}
