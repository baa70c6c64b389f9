import type { CompletedCheckpointInfo } from '../../runtime/checkpoint/checkpoint-coordinator.js';
import type { LeaderElection } from './leader-election.js';
import { zkPaths, type ZooKeeperHaConfig } from './zookeeper-ha-config.js';
import { ZK_CONNECTION_LOSS, ZK_NO_NODE, ZK_NODE_EXISTS, ZooKeeperError, type ZkOp } from './zookeeper-connection.js';

/** A job in the registry: where its submission (the blob) is in high-availability.storageDir. */
export interface RegisteredJob {
  readonly jobId: string;
  readonly submissionPath: string;
}

/** What ZooKeeper knows of a job's checkpoints. */
export interface JobCheckpointPointers {
  /** The latest completed checkpoint (restored from, never an older one). */
  readonly latest: CompletedCheckpointInfo | undefined;
  /** The next checkpoint id: a new leader's ids start at or after it. */
  readonly nextCheckpointId: number;
}

/** The leader lost its latch node (its session): the write was not made, and must not be. */
export class NotLeaderError extends Error {
  constructor(what: string) {
    super(`${what}: this JobManager no longer leads`);
    this.name = 'NotLeaderError';
  }
}

/**
 * The running-jobs registry and each job's checkpoint pointers in ZooKeeper (small nodes; the
 * blobs stay in high-availability.storageDir and the checkpoint directories):
 * `<cluster>/jobs/<jobId>` (the submission's path), `.../latest-checkpoint` (id and pointer of
 * the latest completed checkpoint) and `.../checkpoint-id-counter` (the next id). Every write
 * is a multi-operation that first checks the leader's latch node: a JobManager whose session
 * ended (so another may lead) cannot write any more. A write that fails on a lost connection
 * is tried again (high-availability.zookeeper.client.max-retry-attempts, retry-wait apart).
 */
export class ZooKeeperJobStore {
  constructor(
    private readonly config: ZooKeeperHaConfig,
    private readonly election: LeaderElection,
  ) {}

  async addJob(job: RegisteredJob): Promise<void> {
    await this.write(`registering job ${job.jobId}`, async (conn) => {
      await conn.mkdirp(zkPaths.jobs(this.config));
      const path = zkPaths.job(this.config, job.jobId);
      const data = Buffer.from(JSON.stringify({ submissionPath: job.submissionPath }));
      return (await conn.exists(path)) ? [{ op: 'set', path, data }] : [{ op: 'create', path, data, mode: 'persistent' }];
    });
  }

  async removeJob(jobId: string): Promise<void> {
    await this.write(`removing job ${jobId}`, async (conn) => {
      const path = zkPaths.job(this.config, jobId);
      const children = await conn.getChildren(path);
      if (!(await conn.exists(path))) return [];
      return [...children.map((c): ZkOp => ({ op: 'remove', path: `${path}/${c}` })), { op: 'remove', path }];
    });
  }

  /** Records a completed checkpoint as the job's latest, and the counter past it; before any sink commits it. */
  async checkpointCompleted(jobId: string, c: CompletedCheckpointInfo): Promise<void> {
    await this.write(`recording checkpoint ${c.checkpointId} of job ${jobId}`, async (conn) => {
      const now = await this.pointers(jobId);
      if (now.latest !== undefined && now.latest.checkpointId >= c.checkpointId) {
        throw new Error(`checkpoint ${c.checkpointId} of job ${jobId} completed after checkpoint ${now.latest.checkpointId}: checkpoint ids went back`);
      }
      return [
        setOrCreate(zkPaths.latestCheckpoint(this.config, jobId), { checkpointId: c.checkpointId, pointer: c.pointer }, now.latest !== undefined),
        setOrCreate(zkPaths.checkpointIdCounter(this.config, jobId), Math.max(now.nextCheckpointId, c.checkpointId + 1), await conn.exists(zkPaths.checkpointIdCounter(this.config, jobId))),
      ];
    });
  }

  /** Moves the job's counter to `nextCheckpointId` unless it is there already (a triggered checkpoint's id is used). */
  async advanceCounter(jobId: string, nextCheckpointId: number): Promise<void> {
    await this.write(`advancing the checkpoint id counter of job ${jobId}`, async (conn) => {
      const path = zkPaths.checkpointIdCounter(this.config, jobId);
      const now = await this.pointers(jobId);
      if (now.nextCheckpointId >= nextCheckpointId) return [];
      return [setOrCreate(path, nextCheckpointId, await conn.exists(path))];
    });
  }

  /** The registered jobs. */
  async jobs(): Promise<RegisteredJob[]> {
    const conn = this.leaderConnection('listing the jobs').conn;
    const ids = await conn.getChildren(zkPaths.jobs(this.config));
    const jobs: RegisteredJob[] = [];
    for (const jobId of ids.sort()) {
      const data = await conn.getData(zkPaths.job(this.config, jobId));
      if (data === undefined) continue;
      const { submissionPath } = JSON.parse(data.toString('utf8')) as { submissionPath: string };
      jobs.push({ jobId, submissionPath });
    }
    return jobs;
  }

  async pointers(jobId: string): Promise<JobCheckpointPointers> {
    const conn = this.leaderConnection(`reading the checkpoints of job ${jobId}`).conn;
    const latestData = await conn.getData(zkPaths.latestCheckpoint(this.config, jobId));
    const counterData = await conn.getData(zkPaths.checkpointIdCounter(this.config, jobId));
    const latest = latestData === undefined ? undefined : (JSON.parse(latestData.toString('utf8')) as CompletedCheckpointInfo);
    const counter = counterData === undefined ? 1 : Number(counterData.toString('utf8'));
    if (!Number.isInteger(counter) || counter < 1) throw new Error(`${zkPaths.checkpointIdCounter(this.config, jobId)} holds no checkpoint id: '${counterData?.toString('utf8')}'`);
    return { latest, nextCheckpointId: Math.max(counter, (latest?.checkpointId ?? 0) + 1) };
  }

  private leaderConnection(what: string): NonNullable<ReturnType<LeaderElection['leaderConnection']>> {
    const l = this.election.leaderConnection();
    if (l === undefined) throw new NotLeaderError(what);
    return l;
  }

  /** Runs `ops` (built anew per attempt) fenced by the latch node; retried on a lost connection. */
  private async write(what: string, ops: (conn: ReturnType<ZooKeeperJobStore['leaderConnection']>['conn']) => Promise<ZkOp[]>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const { conn, latchPath } = this.leaderConnection(what);
      try {
        const built = await ops(conn);
        if (built.length === 0) return;
        await conn.multi([{ op: 'check', path: latchPath }, ...built]);
        return;
      } catch (e) {
        const code = e instanceof ZooKeeperError ? e.code : undefined;
        // The latch node is gone: its session ended, another JobManager may lead.
        if (code === ZK_NO_NODE && !(await conn.exists(latchPath).catch(() => false))) throw new NotLeaderError(what);
        const retriable = code === ZK_CONNECTION_LOSS || code === ZK_NODE_EXISTS || code === ZK_NO_NODE;
        if (!retriable || attempt >= this.config.maxRetryAttempts) throw e;
        await new Promise((r) => setTimeout(r, code === ZK_CONNECTION_LOSS ? this.config.retryWaitMs : 50));
      }
    }
  }
}

function setOrCreate(path: string, value: unknown, exists: boolean): ZkOp {
  const data = Buffer.from(JSON.stringify(value));
  return exists ? { op: 'set', path, data } : { op: 'create', path, data, mode: 'persistent' };
}
