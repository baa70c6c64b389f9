import { spawn, type ChildProcess } from 'node:child_process';
import { CLUSTER_SECRET_ENV, taskManagerEnvironment, taskManagerNodeArgs } from './task-manager-environment.js';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Configuration, ConfigValue } from '../config/configuration.js';
import { JobManager } from './job-manager.js';
import { toLogger, type LogTarget, type Logger } from '../util/logger.js';

/** The `sluice` executable of this installation (also when this module runs from src/ in tests). */
export function sluiceBin(): string {
  const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const root = basename(here) === 'src' || basename(here) === 'dist' ? resolve(here, '..') : here;
  return join(root, 'bin', 'sluice.js');
}

export interface LocalClusterOptions {
  /** Cluster configuration for the JobManager, and -D options for the TaskManagers. */
  readonly config: Configuration;
  readonly taskManagers: number;
  readonly slotsPerTaskManager: number;
  /** Restart a TaskManager process that dies (default true). */
  readonly restartTaskManagers?: boolean;
  /** The cluster's and the JobManager's lines (default: this process's log, as `[cluster]` and `[jobmanager]`). */
  readonly log?: LogTarget;
  /** What jobs report (restarts, restores); default: `log`. */
  readonly jobLog?: LogTarget;
  /** TaskManagers log only problems, not their registration. */
  readonly quietTaskManagers?: boolean;
  /** Where TaskManager output goes (default: this process's stderr). */
  readonly taskManagerOutput?: 'inherit' | 'ignore';
  /** The JobManager's `highAvailability` (default true). */
  readonly highAvailability?: boolean;
  /** The JobManager's `rest` (default true). */
  readonly rest?: boolean;
}

/** How long stop() waits for the suspended jobs' tasks to close before it stops the TaskManagers. */
const SUSPEND_WAIT_MS = 10_000;

/** A TaskManager child process of the local cluster. */
export interface TaskManagerProcess {
  readonly id: string;
  process: ChildProcess;
  restarts: number;
}

/**
 * A standalone cluster on this machine: the JobManager in this process and one TaskManager
 * process per slot group, restarted when one dies (as a resource manager would ask for a
 * new one). `sluice cluster start` runs it in the background; `sluice run` uses it as its
 * embedded runtime.
 */
export class LocalCluster {
  readonly jobManager: JobManager;
  readonly taskManagers: TaskManagerProcess[] = [];
  private stopping = false;
  private readonly log: Logger;

  constructor(private readonly o: LocalClusterOptions) {
    this.log = toLogger(o.log, 'cluster');
    this.jobManager = new JobManager({
      config: o.config,
      log: toLogger(o.log, 'jobmanager'),
      ...(o.jobLog === undefined ? {} : { jobLog: o.jobLog }),
      ...(o.highAvailability === undefined ? {} : { highAvailability: o.highAvailability }),
      ...(o.rest === undefined ? {} : { rest: o.rest }),
    });
  }

  /** Starts the JobManager and the TaskManagers; resolves when all TaskManagers registered. */
  async start(): Promise<void> {
    await this.jobManager.start();
    for (let i = 0; i < this.o.taskManagers; i++) {
      const tm: TaskManagerProcess = { id: `tm-${i}`, process: undefined as unknown as ChildProcess, restarts: 0 };
      this.taskManagers.push(tm);
      this.spawn(tm);
    }
    await this.waitForTaskManagers(this.o.taskManagers, 30_000);
  }

  /** Resolves when `n` TaskManagers are registered. */
  async waitForTaskManagers(n: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.jobManager.registry.taskManagers.size < n) {
      if (Date.now() > deadline) throw new Error(`only ${this.jobManager.registry.taskManagers.size} of ${n} TaskManagers registered within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private spawn(tm: TaskManagerProcess): void {
    const args = [sluiceBin(), 'taskmanager', '--jobmanager', `127.0.0.1:${this.jobManager.rpcPort}`, '--slots', String(this.o.slotsPerTaskManager), '--id', tm.id, ...(this.o.quietTaskManagers === true ? ['--quiet'] : [])];
    for (const [k, v] of this.o.config.entries() as [string, ConfigValue][]) if (k.startsWith('taskmanager.') || k.startsWith('heartbeat.') || k.startsWith('task.') || k.startsWith('log.')) args.push('-D', `${k}=${v}`);
    // The secret goes in the environment, which only this user can read, not on the command line, which `ps` shows everyone.
    const env = taskManagerEnvironment(process.env, { SLUICE_PARENT_PID: String(process.pid) });
    const secret = this.o.config.getString('cluster.secret');
    // Exactly the cluster's secret (not one this process inherited).
    if (secret === undefined) delete env[CLUSTER_SECRET_ENV];
    else env[CLUSTER_SECRET_ENV] = secret;
    // SLUICE_TASKMANAGER_NODE_ARGS: more options from the environment (profiling a benchmark's TaskManagers).
    const nodeArgs = taskManagerNodeArgs(`${this.o.config.getString('env.java.opts.taskmanager') ?? ''} ${process.env.SLUICE_TASKMANAGER_NODE_ARGS ?? ''}`);
    const child = spawn(process.execPath, [...nodeArgs, ...args], { env, stdio: ['ignore', this.o.taskManagerOutput ?? 'inherit', this.o.taskManagerOutput ?? 'inherit'] });
    tm.process = child;
    child.on('exit', (code, signal) => {
      if (this.stopping || tm.process !== child) return;
      this.log.warn(`TaskManager ${tm.id} (pid ${child.pid}) exited (${signal ?? `code ${code}`})${this.o.restartTaskManagers === false ? '' : '; starting a new one'}`, { taskManager: tm.id });
      if (this.o.restartTaskManagers === false) return;
      tm.restarts++;
      setTimeout(() => {
        if (!this.stopping) this.spawn(tm);
      }, 200).unref();
    });
  }

  /** Suspends the running jobs (see JobManager.stop), then stops the TaskManagers and the JobManager (see there for `restGraceMs`). */
  async stop(restGraceMs = 0): Promise<void> {
    this.stopping = true;
    const running = this.jobManager.runningJobs();
    for (const j of running) j.suspend();
    // Their tasks close while the TaskManagers still run (sinks closed, not cut off); a task
    // that does not close in time goes with its TaskManager.
    const suspended = Promise.allSettled(running.map((j) => j.run()));
    await Promise.race([suspended, new Promise((r) => setTimeout(r, SUSPEND_WAIT_MS).unref())]);
    await Promise.all(
      this.taskManagers.map(
        (tm) =>
          new Promise<void>((resolve) => {
            const p = tm.process;
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGTERM');
            setTimeout(() => p.kill('SIGKILL'), 3000).unref();
          }),
      ),
    );
    await this.jobManager.stop(restGraceMs);
  }
}
