import type { Configuration } from '../../config/configuration.js';
import type { Clock } from '../task/clock.js';
import type { StreamTask } from '../task/stream-task.js';
import type { SourceStreamTask } from '../task/source-stream-task.js';
import { TaskScheduler } from '../task/task-scheduler.js';
import type { AttemptSpec, DeployedAttempt, Deployer } from './deployer.js';
import type { SplitAnswer } from '../split-enumerator.js';
import { wireTasks } from './task-wiring.js';
import { awaitTasksClosed } from './cancellation-watchdog.js';

/** Network and batching options of task wiring, read from the configuration. */
export function wiringOptions(config: Configuration): { batchSizeRecords: number; buffersPerChannel: number; floatingBuffersPerGate: number } {
  return {
    batchSizeRecords: config.getNumber('execution.buffer-batch-size'),
    buffersPerChannel: config.getNumber('taskmanager.network.memory.buffers-per-channel'),
    floatingBuffersPerGate: config.getNumber('taskmanager.network.memory.floating-buffers-per-gate'),
  };
}

/** Runs every subtask in this process, on one scheduler, with in-memory channels. */
export class InProcessDeployer implements Deployer {
  private readonly scheduler = new TaskScheduler();

  constructor(
    private readonly config: Configuration,
    private readonly clock: Clock,
  ) {}

  async deploy(spec: AttemptSpec): Promise<DeployedAttempt> {
    const { tasks, sourceTasks } = wireTasks({
      graph: spec.graph,
      isLocal: () => true,
      attemptNumber: spec.attemptNumber,
      scheduler: this.scheduler,
      clock: this.clock,
      ...wiringOptions(this.config),
      checkpointing: spec.checkpointing,
      restore: spec.restore,
      splits: spec.splits,
      requestSplit: spec.requestSplit,
      reportWatermark: spec.reportWatermark,
    });
    return new InProcessAttempt(tasks, sourceTasks, spec.fail, this.config.getNumber('task.cancellation.timeout'));
  }
}

/** The tasks of one attempt in this process. */
export class InProcessAttempt implements DeployedAttempt {
  readonly done: Promise<void>;

  constructor(
    readonly tasks: readonly StreamTask[],
    private readonly sourceTasks: readonly SourceStreamTask[],
    fail: (error: Error) => void,
    private readonly cancellationTimeoutMs = 0,
  ) {
    this.done = allDone(tasks);
    this.done.catch((e: unknown) => fail(e instanceof Error ? e : new Error(String(e))));
  }

  initialize(): Promise<void> {
    return Promise.all(this.tasks.map((t) => t.initialize())).then(() => {});
  }

  start(): void {
    for (const t of this.tasks) t.start();
  }

  /**
   * Resolves when every task ended and closed its operators: only then may the next attempt
   * open its own. Rejects with TaskCancellationTimeoutError after task.cancellation.timeout.
   */
  async cancel(): Promise<void> {
    for (const t of this.tasks) t.cancel();
    await awaitTasksClosed(this.tasks, this.cancellationTimeoutMs);
  }

  triggerSources(barrier: import('../channel/stream-element.js').CheckpointBarrier): void {
    for (const t of this.sourceTasks) t.triggerCheckpoint(barrier);
  }

  notifyComplete(checkpointId: number, final: boolean): void {
    for (const t of this.tasks) t.notifyCheckpointComplete(checkpointId, final);
  }

  notifyAborted(checkpointId: number, reason: string): void {
    for (const t of this.tasks) t.notifyCheckpointAborted(checkpointId, reason);
  }

  stopSources(drain: boolean): void {
    for (const t of this.sourceTasks) t.stop(drain);
  }

  assignSplit(vertexId: number, subtaskIndex: number, answer: SplitAnswer): void {
    this.sourceTasks.find((t) => t.vertex.id === vertexId && t.subtaskIndex === subtaskIndex)?.assignSplit(answer);
  }

  announceMaxWatermark(vertexId: number, subtaskIndex: number, maxWatermarkMs: number): void {
    this.sourceTasks.find((t) => t.vertex.id === vertexId && t.subtaskIndex === subtaskIndex)?.announceMaxWatermark(maxWatermarkMs);
  }
}

/** Resolves when every task is done; rejects with the first failure. */
export function allDone(tasks: readonly StreamTask[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let remaining = tasks.length;
    if (remaining === 0) resolve();
    for (const t of tasks) {
      t.done.then(
        () => {
          if (--remaining === 0) resolve();
        },
        (e: unknown) => reject(e),
      );
    }
  });
}
