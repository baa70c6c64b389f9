import type { CompletedCheckpointInfo } from '../runtime/checkpoint/checkpoint-coordinator.js';
import { MetricFetcher } from '../metrics/metric-fetcher.js';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { availableParallelism, freemem, totalmem } from 'node:os';
import { join } from 'node:path';
import { ConfigError, Configuration, type ConfigValue } from '../config/configuration.js';
import { RestServer, RestError } from '../rest/rest-server.js';
import { waitingForSlotsJson } from '../rest/job-status-json.js';
import type { RestRoute } from '../rest/rest-route.js';
import { JobExecutor } from '../runtime/job-executor.js';
import type { TaskManagerInfo } from '../dashboard/task-managers.js';
import { ClusterDeployer, type ClusterJob } from './cluster-deployer.js';
import { graphFingerprint } from './graph-fingerprint.js';
import { buildJob, jobBundle, storeBundle } from './job-bundle.js';
import { TaskManagerRegistry } from './task-manager-registry.js';
import { createCheckpointStorage } from '../runtime/storage/checkpoint-storage-factory.js';
import { isStorageUri, joinStoragePath } from '../runtime/storage/storage-path.js';
import { openHaJobStore, type HaJobStore } from './ha-job-store.js';
import { makeWorkDir } from './work-dir.js';
import { toLogger, type LogTarget, type Logger } from '../util/logger.js';
import { JobManagerLeadership } from './ha/job-manager-leadership.js';
import { isZooKeeperHa, zooKeeperHaConfig, type ZooKeeperHaConfig } from './ha/zookeeper-ha-config.js';
import { NotLeaderError } from './ha/zookeeper-job-store.js';
import { recoveredCheckpoints } from './ha/recovered-checkpoints.js';

/** A job submission (REST POST /jobs, or in process). */
export interface JobSubmission {
  readonly bundle: string;
  readonly config: readonly (readonly [string, ConfigValue])[];
  readonly args: readonly string[];
  readonly name: string;
  readonly savepointPath?: string | undefined;
  readonly allowNonRestoredState?: boolean;
  /** Set when the JobManager takes back a job after a restart. */
  readonly jobId?: string;
}

interface RunningJob {
  readonly executor: JobExecutor;
  readonly result: Promise<unknown>;
}

/** How long a JobManager that lost leadership waits for its jobs to stop before it lets its TaskManagers go. */
const STEP_DOWN_WAIT_MS = 10_000;

/** How long a metric query waits for the TaskManagers' answers (those that did not answer are left out). */
const METRIC_QUERY_TIMEOUT_MS = 2000;

export interface JobManagerOptions {
  /** Cluster configuration: jobmanager.rpc.*, rest.*, heartbeat.*, cluster.secret, high-availability.storageDir. */
  readonly config: Configuration;
  /** Cluster events: TaskManagers registering and lost, jobs starting and ending (default: this process's log as `[jobmanager]`). */
  readonly log?: LogTarget;
  /** What the jobs' executors report: restarts, restores, checkpoint failures (default: `log`). */
  readonly jobLog?: LogTarget;
  /**
   * Whether submitted jobs are written to the high-availability directory and taken back from
   * it on start (default true). False for the embedded cluster of `sluice run`, which goes
   * away with its one job: it must neither run the jobs another run left there (one that was
   * killed, or one still running in another process with the same checkpoint directory)
   * alongside its own, nor leave its job there for the next run to pick up.
   */
  readonly highAvailability?: boolean;
  /** Whether it serves the REST API (default true). False for `sluice run -D rest.enabled=false`. */
  readonly rest?: boolean;
}

/**
 * The JobManager: TaskManagers register with it over TCP (jobmanager.rpc.port); jobs are
 * submitted through its REST API (POST /jobs with a bundled job module), run by a
 * JobExecutor each with checkpoints and restarts, deployed onto the TaskManagers' slots.
 * Submitted jobs are written to the high-availability directory, so a restarted JobManager
 * takes them back from their latest retained checkpoint.
 */
export class JobManager {
  readonly registry: TaskManagerRegistry;
  readonly rest: RestServer;
  private readonly metricFetcher: MetricFetcher;
  private server: Server | undefined;
  private readonly jobs = new Map<string, RunningJob>();
  private readonly workDir: string;
  private readonly log: Logger;
  private readonly jobLog: Logger;
  private readonly haDir: string | undefined;
  /** high-availability.type zookeeper: the election and the ZooKeeper store, from start() on. */
  private readonly zooKeeper: ZooKeeperHaConfig | undefined;
  private leadership: JobManagerLeadership | undefined;
  /** Leadership changes, one after the other: a grant waits until the jobs stopped by the revoke before it have ended. */
  private leadershipChanges: Promise<void> = Promise.resolve();
  private haStore: Promise<HaJobStore> | undefined;
  rpcPort = 0;
  restUrl = '';

  constructor(private readonly o: JobManagerOptions) {
    this.log = toLogger(o.log, 'jobmanager');
    this.jobLog = o.jobLog === undefined ? this.log : toLogger(o.jobLog, 'jobmanager');
    this.workDir = makeWorkDir('sluice-jm-', 'JobManager');
    const c = o.config;
    const heartbeatIntervalMs = c.getNumber('heartbeat.interval');
    const heartbeatTimeoutMs = c.getNumber('heartbeat.timeout');
    if (heartbeatTimeoutMs <= heartbeatIntervalMs) {
      rmSync(this.workDir, { recursive: true, force: true });
      throw new ConfigError(
        `heartbeat.timeout (${heartbeatTimeoutMs} ms) must be larger than heartbeat.interval (${heartbeatIntervalMs} ms), or every ` +
          'TaskManager would be lost between two heartbeats: raise the timeout or lower the interval',
      );
    }
    this.registry = new TaskManagerRegistry({
      secret: c.getString('cluster.secret'),
      heartbeatIntervalMs,
      heartbeatTimeoutMs,
      log: this.log,
    });
    const ha = c.getString('high-availability.storageDir') ?? c.getString('execution.checkpointing.dir');
    this.haDir = ha === undefined || o.highAvailability === false ? undefined : joinStoragePath(ha, 'jobmanager-ha');
    try {
      this.zooKeeper = o.highAvailability === false || !isZooKeeperHa(c) ? undefined : zooKeeperHaConfig(c);
      if (this.zooKeeper !== undefined && this.haDir === undefined) {
        throw new ConfigError('high-availability.type zookeeper needs high-availability.storageDir: a directory every JobManager reaches, where the leader keeps the submitted jobs');
      }
    } catch (e) {
      rmSync(this.workDir, { recursive: true, force: true });
      throw e;
    }
    const token = c.getString('rest.auth.token');
    const registry = this.registry;
    this.metricFetcher = new MetricFetcher((jobId) => registry.queryMetrics(jobId, METRIC_QUERY_TIMEOUT_MS), c.getNumber('metrics.fetcher.update-interval'));
    this.rest = new RestServer({
      address: c.getString('rest.address') ?? '127.0.0.1',
      port: c.getNumber('rest.port'),
      ...(token === undefined ? {} : { authToken: token }),
      taskManagers: () => this.taskManagerInfos(),
      clusterConfig: () => c.entries(),
      routes: this.routes(),
      remoteMetrics: (jobId) => this.metricFetcher.samples(jobId),
    });
  }

  /** Listens for TaskManagers and REST clients; takes back the jobs of a previous run. */
  async start(): Promise<void> {
    const server = createServer((socket) => this.registry.accept(socket));
    this.server = server;
    const c = this.o.config;
    // `flag`/`addressFlag`: the command-line flag of the port/address option, if there is one.
    const taken = (what: string, key: string, flag: string, addressFlag?: string) => (e: unknown): never => {
      const { code, syscall } = e as NodeJS.ErrnoException;
      const addressKey = key.replace(/port$/, 'address');
      const giveAddress = `give a host name or IP address of this machine with ${addressFlag === undefined ? '' : `${addressFlag} or `}-D ${addressKey}=<address>`;
      if (code === 'EADDRINUSE') throw new Error(`the ${what} port ${c.getNumber(key)} is taken; give another with ${flag} or -D ${key}=<port> (0: any free port)`, { cause: e });
      if (code === 'EADDRNOTAVAIL') throw new Error(`the ${what} address ${c.getString(addressKey)} (${addressKey}) is not one of this machine's; ${giveAddress}`, { cause: e });
      if (syscall === 'getaddrinfo') throw new Error(`the ${what} address '${c.getString(addressKey)}' (${addressKey}) cannot be resolved (${code}); ${giveAddress}`, { cause: e });
      throw e;
    };
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(c.getNumber('jobmanager.rpc.port'), c.getString('jobmanager.rpc.address') ?? '127.0.0.1', () => resolve());
    }).catch(taken('rpc', 'jobmanager.rpc.port', '--rpc-port'));
    this.rpcPort = (server.address() as AddressInfo).port;
    try {
      if (this.o.rest !== false) this.restUrl = await this.rest.start().catch(taken('REST', 'rest.port', '--rest-port', '--rest-address'));
    } catch (e) {
      // Nothing may keep the process alive: the command that started it exits with the error.
      await this.crash();
      rmSync(this.workDir, { recursive: true, force: true });
      throw e;
    }
    this.log.info(`listening for TaskManagers on ${c.getString('jobmanager.rpc.address')}:${this.rpcPort}; ${this.o.rest === false ? 'no REST API' : `REST API at ${this.restUrl}`}`);
    if (this.zooKeeper === undefined) {
      await this.recoverJobs();
      return;
    }
    try {
      await this.startLeaderElection(this.zooKeeper);
    } catch (e) {
      await this.crash();
      rmSync(this.workDir, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * Shuts the JobManager down. Its running jobs are suspended, as Flink's are: their tasks
   * stop, but their checkpoints and high-availability records stay, so a JobManager started
   * again on the same directory takes them back. `restGraceMs`: how long the REST API still
   * serves clients the results of operations they triggered (the embedded cluster of
   * `sluice run`, whose job a `sluice stop` ended, waits for that command to see the result).
   */
  async stop(restGraceMs = 0): Promise<void> {
    for (const j of this.jobs.values()) j.executor.suspend();
    await Promise.allSettled([...this.jobs.values()].map((j) => j.result));
    // Only now may a standby lead: the jobs' tasks here have stopped.
    this.leadership?.stop();
    this.registry.close();
    await this.rest.stop(restGraceMs);
    const server = this.server;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(this.workDir, { recursive: true, force: true });
  }

  /** Stops listening without canceling jobs or cleaning up (a JobManager that dies; tests). */
  async crash(): Promise<void> {
    this.leadership?.stop();
    this.registry.close();
    await this.rest.stop(0);
    const server = this.server;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  runningJobs(): JobExecutor[] {
    return [...this.jobs.values()].map((j) => j.executor).filter((e) => e.endTimeMs === undefined);
  }

  job(jobId: string): JobExecutor | undefined {
    return this.jobs.get(jobId)?.executor;
  }

  /** Builds the job's graph here, then runs it on the TaskManagers; resolves once it is accepted. */
  async submit(s: JobSubmission, recoveredCheckpoints: readonly CompletedCheckpointInfo[] = [], nextCheckpointIdAtLeast?: number): Promise<JobExecutor> {
    const leaderSessionId = this.leadership?.leaderSessionId;
    if (this.leadership !== undefined && leaderSessionId === undefined) throw new NotLeaderError('submitting a job');
    const bundle = jobBundle(s.bundle);
    const file = storeBundle(join(this.workDir, 'jobs'), bundle);
    const jobConfig = jobConfiguration(this.o.config, s.config);
    const config = new Configuration(jobConfig);
    const { graph, env } = await buildJob(file, jobConfig, s.args, s.name);
    const jobId = s.jobId ?? randomBytes(16).toString('hex');
    const job: ClusterJob = { jobId, jobName: graph.jobName, bundle, config: jobConfig, jobArgs: s.args, graphFingerprint: graphFingerprint(graph) };
    const deployer = new ClusterDeployer(this.registry, job, config.getNumber('slot.request.timeout'));
    const executor = new JobExecutor(graph, env.config, {
      jobId,
      deployer,
      log: this.jobLog,
      ...(s.savepointPath === undefined ? {} : { restoreFrom: { path: s.savepointPath, allowNonRestoredState: s.allowNonRestoredState ?? false } }),
      ...(recoveredCheckpoints.length === 0 ? {} : { recoveredCheckpoints }),
      ...(nextCheckpointIdAtLeast === undefined ? {} : { nextCheckpointIdAtLeast }),
      ...(this.leadership === undefined ? {} : { completedCheckpointStore: this.leadership.checkpointStore(jobId) }),
    });
    const persisted = await this.persistJob(jobId, s, env.config.getString('execution.checkpointing.dir'));
    if (this.leadership !== undefined) {
      // Registered in ZooKeeper before it runs; and only by the leader that started to submit it.
      if (this.leadership.leaderSessionId !== leaderSessionId) throw new NotLeaderError(`submitting job ${jobId}`);
      await this.leadership.store.addJob({ jobId, submissionPath: persisted! });
    }
    this.rest.register(executor);
    const result = executor.run().finally(() => {
      // Replaced meanwhile (taken back again by this JobManager, leading again): the new one's routes stay.
      if (this.jobs.get(jobId)?.executor !== executor) return;
      this.registry.forgetJob(jobId);
      this.metricFetcher.forget(jobId);
      // A suspended job is not over: the next JobManager takes it back.
      if (executor.status !== 'SUSPENDED') return this.forgetPersistedJob(jobId);
      return undefined;
    });
    result.then(
      (r) => this.log.info(`job ${jobId} ${r.status.toLowerCase()}${r.status === 'SUSPENDED' ? `: ${this.suspendedNote()}` : ''}`, { jobId }),
      (e: unknown) => this.log.error(`job ${jobId} failed: ${(e as Error).message}`, { jobId, err: e as Error }),
    );
    this.jobs.set(jobId, { executor, result });
    return executor;
  }

  private routes(): RestRoute[] {
    return [
      {
        method: 'POST',
        path: '/jobs',
        // A bundled job module with its local imports.
        maxBodyBytes: 64 * 1024 * 1024,
        handler: async (_p, body) => {
          const b = body as Partial<JobSubmission> | undefined;
          if (b === undefined || typeof b.bundle !== 'string') throw new RestError(400, 'POST /jobs needs a JSON body with "bundle" (the bundled job module, as `sluice run --jobmanager` sends it)');
          const config = Array.isArray(b.config) ? b.config : [];
          if (this.leadership !== undefined && this.leadership.leaderSessionId === undefined) {
            throw new RestError(503, `this JobManager stands by; submit the job to the leading JobManager (its address is in ${this.leadership.describe()})`);
          }
          let executor: JobExecutor;
          try {
            executor = await this.submit({
              bundle: b.bundle,
              config,
              args: Array.isArray(b.args) ? b.args.map(String) : [],
              name: typeof b.name === 'string' ? b.name : 'job',
              savepointPath: typeof b.savepointPath === 'string' ? b.savepointPath : undefined,
              allowNonRestoredState: b.allowNonRestoredState === true,
            });
          } catch (e) {
            throw new RestError(400, `the job cannot be submitted: ${(e as Error).message}`);
          }
          return [200, { jobid: executor.jobId }];
        },
      },
      {
        method: 'GET',
        path: '/jobs/:jobid/result',
        handler: (p) => {
          const j = this.jobs.get(p.jobid!);
          if (j === undefined) throw new RestError(404, `no job ${p.jobid}`);
          const e = j.executor;
          // The current attempt's tasks: `sluice run --detached` waits until they all run.
          const tasks = { running: 0, finished: 0, total: e.tasks.length };
          for (const t of e.tasks) {
            if (t.state === 'running') tasks.running++;
            else if (t.state === 'finished') tasks.finished++;
          }
          return [200, { status: e.status, numRestarts: e.progress().numRestarts, failure: e.exceptions.at(-1)?.message, tasks, 'waiting-for-slots': waitingForSlotsJson(e.pendingSlotRequest()) }];
        },
      },
    ];
  }

  private taskManagerInfos(): TaskManagerInfo[] {
    return [...this.registry.taskManagers.values()].map((tm) => ({
      id: tm.id,
      path: `tcp://${tm.dataHost}:${tm.dataPort}/${tm.pid}`,
      dataPort: tm.dataPort,
      jmxPort: -1,
      timeSinceLastHeartbeat: tm.lastHeartbeatMs,
      slotsNumber: tm.slots,
      freeSlots: tm.freeSlots,
      ...(tm.metricsUrl === undefined ? {} : { metricsUrl: tm.metricsUrl }),
      hardware: { cpuCores: availableParallelism(), physicalMemory: totalmem(), freeMemory: freemem(), managedMemory: 0 },
    }));
  }

  // -- high availability: submitted jobs survive a JobManager restart ------------------------

  /** What becomes of a suspended job (this JobManager stops while it runs). */
  private suspendedNote(): string {
    if (this.haDir !== undefined) return `a JobManager started again on the same high-availability directory (${this.haDir}) takes it back`;
    if (this.o.highAvailability === false) return 'it ends with this cluster';
    return 'no JobManager takes it back, since no high-availability directory keeps it (set high-availability.storageDir or execution.checkpointing.dir)';
  }

  /** The high-availability directory's store (local or s3://), opened once. */
  private jobStore(haDir: string): Promise<HaJobStore> {
    this.haStore ??= openHaJobStore(haDir, this.o.config);
    return this.haStore;
  }

  /** Writes the submission to the high-availability directory's store; returns where it is. */
  private async persistJob(jobId: string, s: JobSubmission, checkpointDir: string | undefined): Promise<string | undefined> {
    if (this.haDir === undefined) return undefined;
    await (await this.jobStore(this.haDir)).put(jobId, { ...s, jobId, checkpointDir });
    return joinStoragePath(this.haDir, `${jobId}.json`);
  }

  private async forgetPersistedJob(jobId: string): Promise<void> {
    if (this.haDir === undefined) return;
    if (this.leadership !== undefined) {
      // Only the leader forgets a job (it ended under it); a JobManager that stepped down leaves it to the next.
      if (this.leadership.leaderSessionId === undefined) return;
      this.leadership.store.removeJob(jobId).catch((e: unknown) => this.log.warn(`cannot remove job ${jobId} from ZooKeeper: ${(e as Error).message}`, { jobId }));
    }
    try {
      await (await this.jobStore(this.haDir)).remove(jobId);
    } catch (e) {
      this.log.warn(`cannot remove the high-availability record of job ${jobId} from ${this.haDir} (${(e as Error).message}): a JobManager started on that directory would run the job again; remove ${jobId}.json there`, { jobId });
    }
  }

  /**
   * Removes the chk-N directories without `_metadata` that the JobManager before left: a
   * checkpoint it was writing, or one it was deleting (`_metadata` goes first). Neither is a
   * checkpoint, and nothing would delete them later.
   */
  private removeIncompleteCheckpoints(jobDir: string): void {
    if (!existsSync(jobDir)) return;
    for (const name of readdirSync(jobDir)) {
      if (!/^chk-\d+$/.test(name) || existsSync(join(jobDir, name, '_metadata'))) continue;
      try {
        rmSync(join(jobDir, name), { recursive: true, force: true });
        this.log.info(`removed ${join(jobDir, name)}: an incomplete checkpoint directory the JobManager before left`);
      } catch (e) {
        this.log.warn(`cannot remove the incomplete checkpoint directory ${join(jobDir, name)}: ${(e as Error).message}`);
      }
    }
  }

  // -- high availability on ZooKeeper: leader election, jobs taken back by a new leader -----

  private async startLeaderElection(zk: ZooKeeperHaConfig): Promise<void> {
    const c = this.o.config;
    const leadership = new JobManagerLeadership({
      config: zk,
      contenderId: `${c.getString('jobmanager.rpc.address') ?? '127.0.0.1'}:${this.rpcPort} pid ${process.pid}`,
      address: { rpcHost: c.getString('jobmanager.rpc.address') ?? '127.0.0.1', rpcPort: this.rpcPort, restUrl: this.restUrl },
      log: this.log,
      onGrant: (leaderSessionId) => {
        this.registry.leaderSessionId = leaderSessionId;
        this.leadershipChanges = this.leadershipChanges.then(() => this.takeLeadership(leaderSessionId));
      },
      onRevoke: (why) => this.stepDown(why),
    });
    this.leadership = leadership;
    await leadership.start();
  }

  /** Leadership granted: takes back the jobs registered in ZooKeeper. */
  private async takeLeadership(leaderSessionId: string): Promise<void> {
    const leadership = this.leadership!;
    const still = (): boolean => leadership.leaderSessionId === leaderSessionId;
    if (!still()) return;
    try {
      for (const { job, pointers } of await leadership.jobsToRecover()) {
        if (!still()) return;
        const running = this.jobs.get(job.jobId);
        if (running !== undefined && running.executor.endTimeMs === undefined) continue;
        await this.takeBackJob(job.submissionPath, pointers);
      }
    } catch (e) {
      if (e instanceof NotLeaderError || !still()) return;
      this.log.error(`cannot take back the jobs registered in ZooKeeper: ${(e as Error).message}`, { err: e as Error });
    }
  }

  private async takeBackJob(submissionPath: string, pointers: { readonly latest: CompletedCheckpointInfo | undefined; readonly nextCheckpointId: number }): Promise<void> {
    if (isStorageUri(submissionPath)) {
      // ZooKeeper HA keeps the submissions on a file system every JobManager reaches; s3:// there is not done yet.
      this.log.error(`cannot take back the job recorded at ${submissionPath}: with high-availability.type zookeeper, high-availability.storageDir must be a shared file system for now, not ${submissionPath.split('/')[0]}//`);
      return;
    }
    const saved = JSON.parse(readFileSync(submissionPath, 'utf8')) as JobSubmission & { jobId: string; checkpointDir: string | undefined };
    const jobDir = saved.checkpointDir === undefined ? undefined : join(saved.checkpointDir, saved.jobId);
    const highestDirectoryId = jobDir === undefined || !existsSync(jobDir) ? 0 : Math.max(0, ...readdirSync(jobDir).filter((n) => /^chk-\d+$/.test(n)).map((n) => Number(n.slice(4))));
    if (jobDir !== undefined) this.removeIncompleteCheckpoints(jobDir);
    const r = recoveredCheckpoints({ latest: pointers.latest, counter: pointers.nextCheckpointId, onDisk: jobDir === undefined ? [] : completedCheckpointsOfJob(jobDir), highestDirectoryId });
    for (const c of r.unrecorded) {
      // Written by the leader before, which died before ZooKeeper recorded it: no sink committed it.
      rmSync(c.pointer, { recursive: true, force: true });
      this.log.info(`removed ${c.pointer}: a checkpoint the leader before wrote but ZooKeeper never recorded`, { jobId: saved.jobId });
    }
    const latest = r.retained.at(-1)?.pointer;
    this.log.info(
      `taking back job ${saved.jobId} (${saved.name}) ${latest === undefined ? (saved.savepointPath === undefined ? 'from the beginning' : `from ${saved.savepointPath}`) : `from ${latest}`}; checkpoint ids go on at ${r.nextCheckpointId}`,
      { jobId: saved.jobId },
    );
    try {
      await this.submit(saved, r.retained, r.nextCheckpointId);
    } catch (e) {
      if (e instanceof NotLeaderError) return;
      this.log.error(`cannot take back job ${saved.jobId}: ${(e as Error).message}`, { jobId: saved.jobId, err: e as Error });
    }
  }

  /**
   * Leadership revoked: the jobs' coordinators and tasks stop at once (suspended: their
   * records stay for the next leader); once they have ended (or after a while), the
   * TaskManagers are let go, to register with the new leader.
   */
  private stepDown(why: string): void {
    this.registry.leaderSessionId = undefined;
    const running = [...this.jobs.values()].filter((j) => j.executor.endTimeMs === undefined);
    for (const j of running) j.executor.suspend();
    this.leadershipChanges = this.leadershipChanges.then(async () => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(running.map((j) => j.result)), new Promise((r) => (timer = setTimeout(r, STEP_DOWN_WAIT_MS)))]);
      clearTimeout(timer);
      this.registry.disconnectAll(`the JobManager no longer leads (${why})`);
    });
  }

  /**
   * A taken-back job's own completed checkpoints, newest first: listed by its checkpoint
   * storage for a URI (s3://), from the directory otherwise (after removing incomplete ones).
   */
  private async retainedCheckpointsOf(saved: JobSubmission & { jobId: string; checkpointDir: string | undefined }): Promise<CompletedCheckpointInfo[]> {
    if (saved.checkpointDir === undefined) return [];
    if (isStorageUri(saved.checkpointDir)) {
      const storage = await createCheckpointStorage({ jobId: saved.jobId, checkpointsDir: saved.checkpointDir, config: new Configuration(jobConfiguration(this.o.config, saved.config)) });
      return (await storage.listRetainedCheckpoints()).map(({ checkpointId, pointer }) => ({ checkpointId, pointer }));
    }
    const jobDir = join(saved.checkpointDir, saved.jobId);
    this.removeIncompleteCheckpoints(jobDir);
    return completedCheckpointsOfJob(jobDir);
  }

  private async recoverJobs(): Promise<void> {
    if (this.haDir === undefined) return;
    for (const { record } of await (await this.jobStore(this.haDir)).list()) {
      const saved = record as JobSubmission & { jobId: string; checkpointDir: string | undefined };
      // Its own checkpoints: restored from the newest, and retained (subsumed, deleted at the end) as before the restart.
      let own: CompletedCheckpointInfo[];
      try {
        own = await this.retainedCheckpointsOf(saved);
      } catch (e) {
        // Not taken back from the beginning, which would run it twice: left for a JobManager that reaches its checkpoints.
        this.log.error(`cannot take back job ${saved.jobId}: its checkpoints in ${saved.checkpointDir} cannot be listed (${(e as Error).message}); restart the JobManager once they can be`, { jobId: saved.jobId, err: e as Error });
        continue;
      }
      const latest = own[0]?.pointer;
      this.log.info(`taking back job ${saved.jobId} (${saved.name}) ${latest === undefined ? (saved.savepointPath === undefined ? 'from the beginning' : `from ${saved.savepointPath}`) : `from ${latest}`}`);
      try {
        await this.submit(saved, own);
      } catch (e) {
        this.log.error(`cannot take back job ${saved.jobId}: ${(e as Error).message}`, { jobId: saved.jobId, err: e as Error });
      }
    }
  }
}

/**
 * Options of the JobManager's configuration that are defaults for the jobs submitted to it,
 * as Flink's cluster configuration is under a job's own: parallelism, pipeline, checkpointing,
 * state backends, restarts, S3. Not the JobManager's own addresses, token and secret.
 */
const JOB_OPTION_PREFIXES = ['parallelism.', 'pipeline.', 'execution.', 'state.', 'restart-strategy.', 's3.', 'taskmanager.network.', 'task.cancellation.', 'slot.request.'];

/** A submitted job's configuration: the JobManager's job options, then the job's own over them. */
export function jobConfiguration(jobManager: Configuration, submitted: readonly (readonly [string, ConfigValue])[]): [string, ConfigValue][] {
  const inherited = jobManager.entries().filter(([k]) => JOB_OPTION_PREFIXES.some((p) => k.startsWith(p)));
  return [...inherited, ...submitted.map(([k, v]): [string, ConfigValue] => [k, v])];
}

/** The chk-N with a _metadata in a job's checkpoint directory, newest first. */
export function completedCheckpointsOfJob(jobDir: string): CompletedCheckpointInfo[] {
  if (!existsSync(jobDir)) return [];
  return readdirSync(jobDir)
    .filter((n) => /^chk-\d+$/.test(n) && existsSync(join(jobDir, n, '_metadata')))
    .map((n) => Number(n.slice(4)))
    .sort((a, b) => b - a)
    .map((checkpointId) => ({ checkpointId, pointer: join(jobDir, `chk-${checkpointId}`) }));
}

/** The newest chk-N with a _metadata in a job's checkpoint directory. */
export function latestRetainedCheckpoint(jobDir: string): string | undefined {
  return completedCheckpointsOfJob(jobDir)[0]?.pointer;
}
