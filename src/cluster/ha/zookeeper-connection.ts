import zookeeper from 'node-zookeeper-client';
import type { Client } from 'node-zookeeper-client';
import type { Logger } from '../../util/logger.js';

/**
 * What a ZooKeeper connection's owner sees (Curator's connection states):
 * - `connected`: connected, the first time or again within the same session (its ephemeral
 *   nodes and watches are still there);
 * - `suspended`: the connection is lost; the session may still be alive on the servers;
 * - `lost`: the session is gone: ZooKeeper said it expired, or the connection stayed lost for
 *   the session timeout (then the servers have expired it, or will any moment). The
 *   connection is closed; a new one has a new session.
 */
export type ConnectionState = 'connected' | 'suspended' | 'lost';

export interface ZooKeeperConnectionOptions {
  /** host:port,host:port,... */
  readonly quorum: string;
  readonly sessionTimeoutMs: number;
  /** How long open() waits for the first connection. */
  readonly connectionTimeoutMs: number;
  readonly log: Logger;
}

/** A ZooKeeper operation failed: `code` is ZooKeeper's (zookeeper.Exception's codes, e.g. NO_NODE -101). */
export class ZooKeeperError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'ZooKeeperError';
  }
}

export const ZK_NO_NODE = zookeeper.Exception.NO_NODE;
export const ZK_NODE_EXISTS = zookeeper.Exception.NODE_EXISTS;
export const ZK_CONNECTION_LOSS = zookeeper.Exception.CONNECTION_LOSS;
export const ZK_SESSION_EXPIRED = zookeeper.Exception.SESSION_EXPIRED;

/** One operation of a multi-operation transaction (all or none applied). */
export type ZkOp =
  | { readonly op: 'check'; readonly path: string }
  | { readonly op: 'create'; readonly path: string; readonly data: Buffer; readonly mode: 'persistent' | 'ephemeral' }
  | { readonly op: 'set'; readonly path: string; readonly data: Buffer }
  | { readonly op: 'remove'; readonly path: string };

/** Node type of create(). */
export type CreateMode = 'persistent' | 'ephemeral' | 'ephemeral-sequential';

const CREATE_MODES: Record<CreateMode, number> = {
  persistent: zookeeper.CreateMode.PERSISTENT,
  ephemeral: zookeeper.CreateMode.EPHEMERAL,
  'ephemeral-sequential': zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

function toError(e: unknown, what: string): ZooKeeperError {
  const code = typeof (e as { getCode?: unknown }).getCode === 'function' ? (e as { getCode(): number }).getCode() : zookeeper.Exception.SYSTEM_ERROR;
  return new ZooKeeperError(`ZooKeeper ${what}: ${String(e)}`, code);
}

/**
 * One ZooKeeper session, over node-zookeeper-client (see docs/architecture.md for why that
 * client). What it adds to the client:
 * - a read timeout: the client sends pings but never notices a server that stops answering
 *   (a stopped or partitioned server keeps the TCP connection open); probes every tenth of
 *   the session timeout, and no answer for two thirds of it (the Java client's read timeout)
 *   drops the connection, so the client reconnects (to another server of the ensemble) and
 *   the owner hears `suspended`, before the servers can expire the session;
 * - `lost` once the connection stayed lost for the session timeout, which the client never
 *   says (it says `expired` only when a server tells it, after reconnecting);
 * - promises, with ZooKeeper's error codes.
 */
export class ZooKeeperConnection {
  private readonly client: Client;
  private state: ConnectionState | 'connecting' = 'connecting';
  private readonly listeners: ((s: ConnectionState) => void)[] = [];
  private probeTimer: NodeJS.Timeout | undefined;
  private lostTimer: NodeJS.Timeout | undefined;
  private probing = false;
  /** When ZooKeeper last answered (a probe, or the connection made). */
  private lastAnswerMs = Date.now();
  private closed = false;

  private constructor(private readonly o: ZooKeeperConnectionOptions) {
    this.client = zookeeper.createClient(o.quorum, { sessionTimeout: o.sessionTimeoutMs, spinDelay: 200, retries: 0 });
  }

  /** Connects (a new session); rejects after the connection timeout. */
  static open(o: ZooKeeperConnectionOptions): Promise<ZooKeeperConnection> {
    const c = new ZooKeeperConnection(o);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        c.close();
        reject(new Error(`cannot connect to ZooKeeper at ${o.quorum} within ${o.connectionTimeoutMs} ms (high-availability.zookeeper.client.connection-timeout): is it running, and is high-availability.zookeeper.quorum right?`));
      }, o.connectionTimeoutMs);
      c.client.once('connected', () => {
        clearTimeout(timer);
        resolve(c);
      });
      c.wire();
      c.client.connect();
    });
  }

  /** The session id (hex), for log lines. */
  get sessionId(): string {
    return this.client.getSessionId().toString('hex');
  }

  get connected(): boolean {
    return this.state === 'connected';
  }

  /** Calls `listener` on every change of state. */
  onState(listener: (s: ConnectionState) => void): void {
    this.listeners.push(listener);
  }

  private set(s: ConnectionState): void {
    if (this.closed || this.state === s || this.state === 'lost') return;
    this.state = s;
    for (const l of [...this.listeners]) l(s);
  }

  private wire(): void {
    this.client.on('connected', () => {
      this.lastAnswerMs = Date.now();
      clearTimeout(this.lostTimer);
      this.lostTimer = undefined;
      this.set('connected');
    });
    this.client.on('disconnected', () => {
      if (this.closed) return;
      if (this.lostTimer === undefined) {
        this.lostTimer = setTimeout(() => this.lose(`no connection to ZooKeeper for the session timeout (${this.o.sessionTimeoutMs} ms)`), this.o.sessionTimeoutMs);
        this.lostTimer.unref();
      }
      this.set('suspended');
    });
    this.client.on('expired', () => this.lose('ZooKeeper expired the session'));
    // Probes every tenth of the session timeout; no answer for two thirds of it is ZooKeeper's own read timeout.
    this.probeTimer = setInterval(() => this.probe(), Math.max(50, Math.floor(this.o.sessionTimeoutMs / 10)));
    this.probeTimer.unref();
  }

  private probe(): void {
    if (this.closed || this.state !== 'connected') return;
    const readTimeoutMs = Math.max(100, Math.floor((this.o.sessionTimeoutMs * 2) / 3));
    const silentMs = Date.now() - this.lastAnswerMs;
    if (silentMs > readTimeoutMs) {
      this.o.log.warn(`ZooKeeper did not answer for ${silentMs} ms (two thirds of the session timeout): dropping the connection to reconnect`);
      this.lastAnswerMs = Date.now();
      this.dropSocket();
      return;
    }
    if (this.probing) return;
    this.probing = true;
    this.client.exists('/', () => {
      this.probing = false;
      this.lastAnswerMs = Date.now();
    });
  }

  /** Closes the client's socket: the client reconnects (same session) and says `disconnected`. */
  private dropSocket(): void {
    // node-zookeeper-client keeps its socket in its connection manager; it has no API to drop it.
    const manager = (this.client as unknown as { connectionManager?: { socket?: { destroy(): void } } }).connectionManager;
    manager?.socket?.destroy();
  }

  private lose(why: string): void {
    if (this.closed || this.state === 'lost') return;
    this.o.log.warn(`ZooKeeper session ${this.sessionId} lost: ${why}`);
    this.set('lost');
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.probeTimer);
    clearTimeout(this.lostTimer);
    this.client.close();
  }

  create(path: string, data: Buffer, mode: CreateMode): Promise<string> {
    return new Promise((resolve, reject) => this.client.create(path, data, CREATE_MODES[mode], (e, p) => (e ? reject(toError(e, `create ${path}`)) : resolve(p))));
  }

  /** Creates the node and its missing parents (persistent, empty); no error if it exists. */
  mkdirp(path: string): Promise<void> {
    return new Promise((resolve, reject) => this.client.mkdirp(path, (e) => (e ? reject(toError(e, `mkdirp ${path}`)) : resolve())));
  }

  /** The node's data, or undefined if it does not exist; `watch`: called once when it is created, changed or deleted. */
  getData(path: string, watch?: () => void): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      const cb = (e: unknown, data: Buffer | undefined): void => {
        if (e && (e as { getCode(): number }).getCode?.() === ZK_NO_NODE) {
          // No data watch on a missing node: watch its creation instead.
          if (watch !== undefined) this.exists(path, watch).then(() => resolve(undefined), reject);
          else resolve(undefined);
          return;
        }
        if (e) reject(toError(e, `getData ${path}`));
        else resolve(data ?? Buffer.alloc(0));
      };
      if (watch === undefined) this.client.getData(path, cb);
      else this.client.getData(path, watch, cb);
    });
  }

  /** Whether the node exists; `watch`: called once when it is created, changed or deleted. */
  exists(path: string, watch?: () => void): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const cb = (e: unknown, stat: unknown): void => (e ? reject(toError(e, `exists ${path}`)) : resolve(stat !== null && stat !== undefined));
      if (watch === undefined) this.client.exists(path, cb);
      else this.client.exists(path, watch, cb);
    });
  }

  /** The node's children (names), [] if it does not exist. */
  getChildren(path: string): Promise<string[]> {
    return new Promise((resolve, reject) =>
      this.client.getChildren(path, (e, children) => {
        if (e && (e as { getCode(): number }).getCode?.() === ZK_NO_NODE) resolve([]);
        else if (e) reject(toError(e, `getChildren ${path}`));
        else resolve(children);
      }),
    );
  }

  /** Applies every operation or none (ZooKeeper's multi). */
  multi(ops: readonly ZkOp[]): Promise<void> {
    const t = this.client.transaction();
    for (const o of ops) {
      if (o.op === 'check') t.check(o.path);
      else if (o.op === 'create') t.create(o.path, o.data, CREATE_MODES[o.mode]);
      else if (o.op === 'set') t.setData(o.path, o.data);
      else t.remove(o.path);
    }
    return new Promise((resolve, reject) =>
      t.commit((e, results: unknown) => {
        if (e) {
          // The first failed operation's code says why (a failed check: NO_NODE).
          const failed = Array.isArray(results) ? (results as { err?: number }[]).find((r) => typeof r.err === 'number' && r.err !== 0 && r.err !== zookeeper.Exception.RUNTIME_INCONSISTENCY) : undefined;
          const err = toError(e, `multi [${ops.map((o) => `${o.op} ${o.path}`).join(', ')}]`);
          reject(failed?.err === undefined ? err : new ZooKeeperError(err.message, failed.err));
        } else resolve();
      }),
    );
  }
}
