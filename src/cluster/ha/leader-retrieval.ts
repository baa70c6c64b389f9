import type { Logger } from '../../util/logger.js';
import { parseLeaderInfo, type LeaderInfo } from './leader-info.js';
import { zkPaths, type ZooKeeperHaConfig } from './zookeeper-ha-config.js';
import { ZooKeeperConnection } from './zookeeper-connection.js';

/**
 * Follows the leading JobManager's address in ZooKeeper (`<cluster>/leader/connection_info`)
 * with a watch, for TaskManagers: calls `onLeader` with every new leader (a new leader
 * session id), and with undefined when there is none (the node is gone, or the connection to
 * ZooKeeper is lost). Reconnects with a new session when one is lost.
 */
export class LeaderRetrieval {
  private conn: ZooKeeperConnection | undefined;
  private current: LeaderInfo | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: {
      readonly config: ZooKeeperHaConfig;
      readonly log: Logger;
      readonly onLeader: (leader: LeaderInfo | undefined) => void;
    },
  ) {}

  /** The leader known now. */
  get leader(): LeaderInfo | undefined {
    return this.current;
  }

  /** Connects and reads the leader; retries in the background when ZooKeeper cannot be reached. */
  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.conn?.close();
  }

  private async connect(): Promise<void> {
    const c = this.o.config;
    try {
      const conn = await ZooKeeperConnection.open({ quorum: c.quorum, sessionTimeoutMs: c.sessionTimeoutMs, connectionTimeoutMs: c.connectionTimeoutMs, log: this.o.log });
      if (this.stopped) return conn.close();
      this.conn = conn;
      conn.onState((s) => {
        if (conn !== this.conn) return;
        if (s === 'connected') return this.read();
        if (s === 'lost') {
          this.conn = undefined;
          this.set(undefined);
          this.retryLater();
        }
      });
      this.read();
    } catch (e) {
      this.o.log.warn(`cannot reach ZooKeeper to find the leading JobManager: ${(e as Error).message}; retrying`);
      this.retryLater();
    }
  }

  private retryLater(): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => void this.connect(), this.o.config.retryWaitMs);
  }

  private read(): void {
    const conn = this.conn;
    if (conn === undefined || this.stopped) return;
    conn.getData(zkPaths.leader(this.o.config), () => this.read()).then(
      (data) => {
        if (conn !== this.conn) return;
        const info = data === undefined ? undefined : parseLeaderInfo(data);
        if (data !== undefined && info === undefined) this.o.log.warn(`${zkPaths.leader(this.o.config)} holds no leader address: ${data.toString('utf8').slice(0, 200)}`);
        this.set(info);
      },
      (e: unknown) => this.o.log.warn(`cannot read the leader's address from ZooKeeper: ${(e as Error).message}`),
    );
  }

  private set(info: LeaderInfo | undefined): void {
    if (info?.leaderSessionId === this.current?.leaderSessionId) return;
    this.current = info;
    this.o.onLeader(info);
  }
}
