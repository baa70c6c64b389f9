import { randomBytes } from 'node:crypto';
import type { Configuration } from '../config/configuration.js';
import type { JobGraph, JobVertex } from '../graph/job-graph.js';
import type { StreamEdge } from '../graph/stream-graph.js';
import type { InputChannel, OutputChannel } from './channel/channel.js';
import { LocalChannel } from './channel/local-channel.js';
import { isPointwise } from './channel/partitioner.js';
import { systemClock, type Clock } from './task/clock.js';
import { InputStreamTask } from './task/input-stream-task.js';
import { SourceStreamTask } from './task/source-stream-task.js';
import type { StreamTask, TaskDeployment } from './task/stream-task.js';
import { TaskScheduler } from './task/task-scheduler.js';

export interface VertexResult {
  readonly name: string;
  readonly parallelism: number;
  readonly recordsIn: number;
  readonly recordsOut: number;
}

export interface JobResult {
  readonly jobId: string;
  readonly jobName: string;
  readonly status: 'FINISHED' | 'CANCELED';
  readonly durationMs: number;
  readonly vertices: readonly VertexResult[];
}

/** Live counters of a running job. */
export interface JobProgress {
  /** Records emitted by sources so far. */
  readonly sourceRecords: number;
  /** Records received by the last operators (those without outputs). */
  readonly sinkRecords: number;
  /** Lowest event-time watermark at the last operators; undefined before the first. */
  readonly watermarkMs: number | undefined;
  readonly runningTasks: number;
}

export class JobExecutionError extends Error {
  override readonly name = 'JobExecutionError';
}

export interface LocalExecutorOptions {
  readonly clock?: Clock;
  readonly jobId?: string;
}

/** Runs a job graph in this process: every subtask on one scheduler, local channels between them. */
export class LocalExecutor {
  readonly jobId: string;
  private readonly clock: Clock;
  tasks: StreamTask[] = [];
  private canceled = false;

  constructor(
    readonly jobGraph: JobGraph,
    readonly config: Configuration,
    options: LocalExecutorOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.jobId = options.jobId ?? randomBytes(16).toString('hex');
  }

  async run(): Promise<JobResult> {
    const startedMs = Date.now();
    const scheduler = new TaskScheduler();
    const exclusive = this.config.getNumber('taskmanager.network.memory.buffers-per-channel');
    const floating = this.config.getNumber('taskmanager.network.memory.floating-buffers-per-gate');
    const batchSizeRecords = this.config.getNumber('execution.buffer-batch-size');

    // channels[edge][producer][consumer]
    const outputs = new Map<JobVertex, Map<StreamEdge, OutputChannel[]>[]>();
    const inputs = new Map<JobVertex, InputChannel[][][]>();
    for (const v of this.jobGraph.vertices) {
      outputs.set(v, Array.from({ length: v.parallelism }, () => new Map()));
      const numInputs = v.inputs.some((e) => e.streamEdge.typeNumber === 2) ? 2 : v.inputs.length > 0 ? 1 : 0;
      inputs.set(v, Array.from({ length: v.parallelism }, () => Array.from({ length: numInputs }, () => [])));
    }
    for (const v of this.jobGraph.vertices) {
      const channelsPerInput = new Map<number, number>();
      for (const e of v.inputs) {
        const t = e.streamEdge.typeNumber;
        channelsPerInput.set(t, (channelsPerInput.get(t) ?? 0) + (isPointwise(e.streamEdge.partitioning) ? 1 : e.source.parallelism));
      }
      for (const e of v.inputs) {
        const pointwise = isPointwise(e.streamEdge.partitioning);
        const t = e.streamEdge.typeNumber;
        const capacity = exclusive + Math.ceil(floating / channelsPerInput.get(t)!);
        for (let p = 0; p < e.source.parallelism; p++) {
          const producerChannels: OutputChannel[] = [];
          for (let c = 0; c < v.parallelism; c++) {
            if (pointwise && p !== c) continue;
            const ch = new LocalChannel(capacity);
            producerChannels.push(ch);
            inputs.get(v)![c]![t - 1]!.push(ch);
          }
          outputs.get(e.source)![p]!.set(e.streamEdge, producerChannels);
        }
      }
    }

    for (const v of this.jobGraph.vertices) {
      const head = v.nodes[0]!;
      let splitsPerSubtask: unknown[][] | undefined;
      if (head.source !== undefined) {
        const splits = await head.source.createSplits(v.parallelism);
        splitsPerSubtask = Array.from({ length: v.parallelism }, () => []);
        splits.forEach((s, i) => {
          const target = head.source!.assignSplit?.(s, i, v.parallelism) ?? i % v.parallelism;
          splitsPerSubtask![target]!.push(s);
        });
      }
      for (let i = 0; i < v.parallelism; i++) {
        const d: TaskDeployment = {
          vertex: v,
          subtaskIndex: i,
          attemptNumber: 0,
          outputs: outputs.get(v)![i]!,
          scheduler,
          clock: this.clock,
          batchSizeRecords,
          checkpointing: undefined,
          restore: undefined,
        };
        const task =
          head.source !== undefined ? new SourceStreamTask(d, head.source, splitsPerSubtask![i]!) : new InputStreamTask(d, inputs.get(v)![i]!);
        this.tasks.push(task);
      }
    }

    try {
      await Promise.all(this.tasks.map((t) => t.initialize()));
    } catch (e) {
      for (const t of this.tasks) t.cancel();
      throw new JobExecutionError(`job '${this.jobGraph.jobName}' failed to start: ${(e as Error).message}`, { cause: e });
    }
    for (const t of this.tasks) t.start();

    try {
      await firstFailure(this.tasks);
    } catch (e) {
      for (const t of this.tasks) t.cancel();
      throw new JobExecutionError(`job '${this.jobGraph.jobName}' failed: ${(e as Error).message}`, { cause: e });
    }
    return {
      jobId: this.jobId,
      jobName: this.jobGraph.jobName,
      status: this.canceled ? 'CANCELED' : 'FINISHED',
      durationMs: Date.now() - startedMs,
      vertices: this.jobGraph.vertices.map((v) => {
        const ts = this.tasks.filter((t) => t.vertex === v);
        return {
          name: v.name,
          parallelism: v.parallelism,
          recordsIn: ts.reduce((a, t) => a + t.recordsIn, 0),
          recordsOut: ts.reduce((a, t) => a + t.recordsOut(), 0),
        };
      }),
    };
  }

  progress(): JobProgress {
    let sourceRecords = 0;
    let sinkRecords = 0;
    let watermark = Number.POSITIVE_INFINITY;
    let running = 0;
    for (const t of this.tasks) {
      if (t.state === 'running') running++;
      if (t.vertex.inputs.length === 0) sourceRecords += t.recordsIn;
      if (t.vertex.outputs.length === 0 && t.vertex.inputs.length > 0) {
        sinkRecords += t.recordsIn;
        watermark = Math.min(watermark, t.inputWatermarkMs());
      }
    }
    const valid = Number.isFinite(watermark) && watermark > Number.MIN_SAFE_INTEGER;
    return { sourceRecords, sinkRecords, watermarkMs: valid ? watermark : undefined, runningTasks: running };
  }

  cancel(): void {
    this.canceled = true;
    for (const t of this.tasks) t.cancel();
  }
}

/** Resolves when every task is done; rejects with the first failure. */
function firstFailure(tasks: readonly StreamTask[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let remaining = tasks.length;
    if (remaining === 0) resolve();
    for (const t of tasks) {
      t.done.then(
        () => {
          if (--remaining === 0) resolve();
        },
        reject,
      );
    }
  });
}
