import type { Configuration } from '../config/configuration.js';
import type { JobGraph } from '../graph/job-graph.js';
import { JobExecutor, type JobExecutorOptions } from './job-executor.js';
import type { StreamTask } from './task/stream-task.js';

export { JobExecutionError, type JobProgress, type JobResult, type RunningAttempt, type VertexResult } from './job-executor.js';
export type LocalExecutorOptions = Omit<JobExecutorOptions, 'deployer'>;

/**
 * Runs a job graph in this process: every subtask on one scheduler, in-memory channels
 * between them (the embedded runtime of tests and of `sluice run --local`).
 */
export class LocalExecutor extends JobExecutor {
  constructor(jobGraph: JobGraph, config: Configuration, options: LocalExecutorOptions = {}) {
    super(jobGraph, config, options);
  }

  /** The tasks of the current attempt, with their operators (all run in this process). */
  get streamTasks(): StreamTask[] {
    return this.tasks as StreamTask[];
  }
}
