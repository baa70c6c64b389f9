import { randomUUID } from 'node:crypto';
import type { Logger } from '../../util/logger.js';
import { latchPosition, mayLead } from './leader-latch-decision.js';
import type { LeaderInfo } from './leader-info.js';
import { zkPaths, type ZooKeeperHaConfig } from './zookeeper-ha-config.js';
import { ZK_NO_NODE, ZooKeeperConnection, type ConnectionState, type ZkOp } from './zookeeper-connection.js';

export interface LeaderElectionOptions {
  readonly config: ZooKeeperHaConfig;
  /** Who contends (for log lines and the latch node's data). */
  readonly contenderId: string;
  /** The address this contender publishes when it leads (its leaderSessionId is made per grant). */
  readonly address: Omit<LeaderInfo, 'leaderSessionId'>;
  readonly log: Logger;
  /** This contender leads from now on, with this leader session id (a fresh UUID per grant). */
  readonly onGrant: (leaderSessionId: string) => void;
  /** This contender no longer leads: it must stop acting as leader at once. */
  readonly onRevoke: (why: string) => void;
}

/**
 * Leader election on ZooKeeper with a leader latch (Curator's LeaderLatch semantics): every
 * contender has an ephemeral sequential node under `<cluster>/leader/latch`; the lowest leads
 * and publishes its address and a fresh leader session id in the ephemeral
 * `<cluster>/leader/connection_info`, every other one watches the node before its own. A
 * leader whose session ends (its process dies, or ZooKeeper expires it) loses its nodes, and
 * the next contender leads. The leader stops leading at once when its connection is
 * suspended (unless it tolerates suspended connections) and when its session is lost; it
 * contends again on a new session.
 */
export class LeaderElection {
  private conn: ZooKeeperConnection | undefined;
  private latchNode: string | undefined;
  private connection: ConnectionState = 'suspended';
  private first = false;
  private leaderSessionId: string | undefined;
  private stopped = false;
  private checking = false;
  private checkAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: LeaderElectionOptions) {}

  /** Connects and contends; rejects when ZooKeeper cannot be reached within the connection timeout. */
  async start(): Promise<void> {
    await this.contend();
  }

  /** The leader session id while leading. */
  get leading(): string | undefined {
    return this.leaderSessionId;
  }

  /** The ZooKeeper connection of the current session (for fenced writes), while leading. */
  leaderConnection(): { readonly conn: ZooKeeperConnection; readonly latchPath: string } | undefined {
    if (this.leaderSessionId === undefined || this.conn === undefined || this.latchNode === undefined) return undefined;
    return { conn: this.conn, latchPath: `${zkPaths.latch(this.o.config)}/${this.latchNode}` };
  }

  /** Stops contending: revokes leadership and closes the session (its nodes go at once). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.revoke('the JobManager is shutting down');
    this.conn?.close();
  }

  private async contend(): Promise<void> {
    const c = this.o.config;
    const conn = await ZooKeeperConnection.open({ quorum: c.quorum, sessionTimeoutMs: c.sessionTimeoutMs, connectionTimeoutMs: c.connectionTimeoutMs, log: this.o.log });
    if (this.stopped) {
      conn.close();
      return;
    }
    this.conn = conn;
    this.connection = 'connected';
    this.first = false;
    conn.onState((s) => this.onConnectionState(conn, s));
    try {
      await conn.mkdirp(zkPaths.latch(c));
      const created = await conn.create(`${zkPaths.latch(c)}/latch-`, Buffer.from(this.o.contenderId), 'ephemeral-sequential');
      this.latchNode = created.slice(created.lastIndexOf('/') + 1);
      this.o.log.info(`contending for leadership on ZooKeeper ${c.quorum} (${c.clusterPath}, session ${conn.sessionId}, latch node ${this.latchNode})`);
    } catch (e) {
      conn.close();
      throw e;
    }
    this.check();
  }

  private onConnectionState(conn: ZooKeeperConnection, s: ConnectionState): void {
    if (conn !== this.conn || this.stopped) return;
    this.connection = s;
    if (s === 'suspended') {
      this.o.log.warn(`the connection to ZooKeeper is suspended${this.leaderSessionId === undefined ? '' : this.o.config.tolerateSuspendedConnections ? ' (still leading: tolerate-suspended-connections)' : ''}`);
      this.decide();
      return;
    }
    if (s === 'lost') {
      this.first = false;
      this.latchNode = undefined;
      this.conn = undefined;
      this.decide('its ZooKeeper session was lost');
      this.retryLater();
      return;
    }
    this.o.log.info(`connected to ZooKeeper again (session ${conn.sessionId})`);
    this.check();
  }

  private retryLater(): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.contend().catch((e: unknown) => {
        this.o.log.warn(`cannot contend for leadership: ${(e as Error).message}; trying again in ${this.o.config.retryWaitMs} ms`);
        this.retryLater();
      });
    }, this.o.config.retryWaitMs);
  }

  /** Reads the latch's children and decides; one at a time (a check asked for meanwhile runs after). */
  private check(): void {
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = true;
    void this.checkOnce()
      .catch((e: unknown) => {
        // A lost connection: the state listener decides; a reconnect checks again.
        this.o.log.warn(`leader election: ${(e as Error).message}`);
      })
      .finally(() => {
        this.checking = false;
        if (this.checkAgain) {
          this.checkAgain = false;
          this.check();
        }
      });
  }

  private async checkOnce(): Promise<void> {
    const conn = this.conn;
    const mine = this.latchNode;
    if (conn === undefined || mine === undefined || !conn.connected || this.stopped) return;
    const latch = zkPaths.latch(this.o.config);
    const position = latchPosition(await conn.getChildren(latch), mine);
    if (conn !== this.conn) return;
    if (position.kind === 'gone') {
      // Its session is alive but its node is not (removed by hand): contend again with a new one.
      this.first = false;
      this.decide('its latch node is gone');
      const created = await conn.create(`${latch}/latch-`, Buffer.from(this.o.contenderId), 'ephemeral-sequential');
      this.latchNode = created.slice(created.lastIndexOf('/') + 1);
      this.checkAgain = true;
      return;
    }
    if (position.kind === 'behind') {
      this.first = false;
      this.decide('another contender leads');
      // Watch the one before: when it goes, check again (it may not lead either).
      const there = await conn.exists(`${latch}/${position.predecessor}`, () => this.check());
      if (!there) this.checkAgain = true;
      return;
    }
    this.first = true;
    this.decide();
  }

  /** Grants or revokes according to mayLead. */
  private decide(why = 'its connection to ZooKeeper is suspended'): void {
    const lead = !this.stopped && mayLead({ first: this.first, connection: this.connection, tolerateSuspended: this.o.config.tolerateSuspendedConnections });
    if (!lead) {
      this.revoke(why);
      return;
    }
    if (this.leaderSessionId !== undefined) return;
    this.grant();
  }

  private grant(): void {
    const conn = this.conn!;
    const latchPath = `${zkPaths.latch(this.o.config)}/${this.latchNode!}`;
    const leaderSessionId = randomUUID();
    this.leaderSessionId = leaderSessionId;
    this.o.log.info(`leading with leader session ${leaderSessionId} (ZooKeeper session ${conn.sessionId})`);
    this.o.onGrant(leaderSessionId);
    void this.publish(conn, latchPath, { ...this.o.address, leaderSessionId }).catch((e: unknown) => {
      if (this.leaderSessionId !== leaderSessionId) return;
      this.o.log.warn(`cannot publish the leader's address in ZooKeeper: ${(e as Error).message}; stepping down`);
      this.revoke('its address could not be published');
      this.first = false;
      // Contend again from the start with a new session.
      this.conn?.close();
      this.conn = undefined;
      this.latchNode = undefined;
      this.retryLater();
    });
  }

  /** Writes connection_info (ephemeral), fenced by the latch node: only while this session holds it. */
  private async publish(conn: ZooKeeperConnection, latchPath: string, info: LeaderInfo): Promise<void> {
    const path = zkPaths.leader(this.o.config);
    const data = Buffer.from(JSON.stringify(info));
    const create: ZkOp = { op: 'create', path, data, mode: 'ephemeral' };
    try {
      await conn.multi([{ op: 'check', path: latchPath }, { op: 'remove', path }, create]);
    } catch (e) {
      if ((e as { code?: number }).code !== ZK_NO_NODE || !(await conn.exists(latchPath))) throw e;
      // No connection_info to replace (the previous leader's went with its session).
      await conn.multi([{ op: 'check', path: latchPath }, create]);
    }
  }

  private revoke(why: string): void {
    if (this.leaderSessionId === undefined) return;
    const old = this.leaderSessionId;
    this.leaderSessionId = undefined;
    this.o.log.warn(`no longer leading (leader session ${old}): ${why}`);
    this.o.onRevoke(why);
  }
}
