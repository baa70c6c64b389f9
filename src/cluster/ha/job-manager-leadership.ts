import type { CompletedCheckpointStore } from '../../runtime/checkpoint/checkpoint-coordinator.js';
import type { Logger } from '../../util/logger.js';
import { LeaderElection } from './leader-election.js';
import type { LeaderInfo } from './leader-info.js';
import type { ZooKeeperHaConfig } from './zookeeper-ha-config.js';
import { NotLeaderError, ZooKeeperJobStore, type JobCheckpointPointers, type RegisteredJob } from './zookeeper-job-store.js';

/**
 * A JobManager's part in ZooKeeper high availability: it contends for leadership, and while
 * it leads keeps the running-jobs registry and each job's checkpoint pointers in ZooKeeper
 * (ZooKeeperJobStore), fenced by its latch node.
 */
export class JobManagerLeadership {
  readonly store: ZooKeeperJobStore;
  private readonly election: LeaderElection;

  constructor(
    private readonly o: {
      readonly config: ZooKeeperHaConfig;
      readonly contenderId: string;
      readonly address: Omit<LeaderInfo, 'leaderSessionId'>;
      readonly log: Logger;
      readonly onGrant: (leaderSessionId: string) => void;
      readonly onRevoke: (why: string) => void;
    },
  ) {
    this.election = new LeaderElection(o);
    this.store = new ZooKeeperJobStore(o.config, this.election);
  }

  start(): Promise<void> {
    return this.election.start();
  }

  stop(): void {
    this.election.stop();
  }

  /** The leader session id while this JobManager leads. */
  get leaderSessionId(): string | undefined {
    return this.election.leading;
  }

  /** Where the quorum and cluster node are, for messages. */
  describe(): string {
    return `ZooKeeper ${this.o.config.quorum} (${this.o.config.clusterPath})`;
  }

  /** A job's checkpoints recorded in ZooKeeper (completed ones awaited; triggered ids advance the counter in the background). */
  checkpointStore(jobId: string): CompletedCheckpointStore {
    return {
      add: (info) => this.store.checkpointCompleted(jobId, info),
      triggered: (checkpointId) => {
        this.store.advanceCounter(jobId, checkpointId + 1).catch((e: unknown) => {
          if (!(e instanceof NotLeaderError)) this.o.log.warn(`job ${jobId}: cannot advance its checkpoint id counter in ZooKeeper: ${(e as Error).message}`, { jobId });
        });
      },
    };
  }

  /** The registered jobs and their checkpoint pointers. */
  async jobsToRecover(): Promise<{ readonly job: RegisteredJob; readonly pointers: JobCheckpointPointers }[]> {
    const jobs = await this.store.jobs();
    const out = [];
    for (const job of jobs) out.push({ job, pointers: await this.store.pointers(job.jobId) });
    return out;
  }
}
