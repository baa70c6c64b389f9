import pg from 'pg';
import type { PostgresConnectionOptions } from '../postgres/options.js';
import { clientConfig, describeClient } from '../postgres/connection.js';
import { connectionFailure } from '../postgres/pg-failures.js';
import { PG_EPOCH_MS } from './pg-text-values.js';

/**
 * A PostgreSQL replication connection (`replication=database`) streaming a logical slot with
 * pgoutput, over `pg` itself: `START_REPLICATION` runs as a pg submittable query, whose
 * CopyBoth data arrives through pg's `handleCopyData`, and the standby status updates go back
 * as CopyData through pg's connection. The caller decides every flush position it reports;
 * nothing here acknowledges on its own. The I/O edge of the CDC source.
 */

/** The session settings the text forms of values are decoded by (pg-text-values.ts). */
const SESSION_OPTIONS = '-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=postgres -c bytea_output=hex -c extra_float_digits=3';

export interface ReplicationHandlers {
  /** An XLogData message (`walEnd`: the server's WAL end when it sent it): `payload` is valid only during the call (pg reuses its buffer). */
  xlogData(walStart: bigint, walEnd: bigint, payload: Buffer): void;
  /** A primary keepalive: the server has sent everything before `walEnd`. */
  keepalive(walEnd: bigint, replyRequested: boolean): void;
  /** The stream failed or ended (the server or the connection closed it). */
  ended(error: Error): void;
}

/** The parts of pg's (undocumented, stable since pg 7) Connection that streaming needs. */
interface PgConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  once(event: 'replicationStart', listener: () => void): void;
  readonly stream: { pause(): void; resume(): void; destroy(): void };
}

export class ReplicationStream {
  private started = false;
  private endedError: Error | undefined;

  private constructor(
    readonly client: pg.Client,
    readonly description: string,
  ) {}

  static async open(o: PostgresConnectionOptions, what: string): Promise<ReplicationStream> {
    const config = { ...clientConfig(o), replication: 'database', options: SESSION_OPTIONS } as pg.ClientConfig;
    const client = new pg.Client(config);
    client.on('error', () => {}); // reported through the active query or the next call
    try {
      await client.connect();
    } catch (e) {
      await client.end().catch(() => {});
      throw connectionFailure(what, describeClient(client), e, clientConfig(o));
    }
    return new ReplicationStream(client, describeClient(client));
  }

  /** SQL on the replication connection before streaming: the simple query protocol only (no parameters). */
  async query<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
    return (await this.client.query<R>(text)).rows;
  }

  private get connection(): PgConnection {
    return (this.client as unknown as { connection: PgConnection }).connection;
  }

  /**
   * `START_REPLICATION SLOT <slot> LOGICAL <startLsn> (proto_version '1', publication_names ...)`.
   * Resolves once the server is streaming (CopyBoth), rejects with the server's error (slot in
   * use, missing, ...). After that, messages and the end go to `handlers`.
   */
  start(command: string, handlers: ReplicationHandlers): Promise<void> {
    let settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
    const started = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const end = (e: Error): void => {
      if (this.endedError !== undefined) return;
      this.endedError = e;
      if (!this.started) settle!.reject(e);
      else handlers.ended(e);
    };
    this.connection.once('replicationStart', () => {
      this.started = true;
      settle!.resolve();
    });
    const submittable = {
      submit: (connection: PgConnection) => connection.query(command),
      handleCopyData: (msg: { chunk: Buffer }) => {
        const b = msg.chunk;
        const kind = b[0];
        if (kind === 0x77 /* w: XLogData */) handlers.xlogData(b.readBigUInt64BE(1), b.readBigUInt64BE(9), b.subarray(25));
        else if (kind === 0x6b /* k: keepalive */) handlers.keepalive(b.readBigUInt64BE(1), b[17] === 1);
        else end(new Error(`postgres cdc source: unknown replication message 0x${(kind ?? 0).toString(16)} from ${this.description}`));
      },
      handleError: (e: Error) => end(e),
      handleReadyForQuery: () => end(new Error(`postgres cdc source: the server ended the replication stream of ${this.description}`)),
      handleCommandComplete: () => {},
      handleRowDescription: () => {},
      handleDataRow: () => {},
      handleEmptyQuery: () => {},
      handleCopyInResponse: () => {},
      handlePortalSuspended: () => {},
    };
    // A submittable: pg returns it (no promise) and routes the server's messages to its handlers.
    this.client.query(submittable as unknown as pg.QueryConfig);
    return started;
  }

  /**
   * A standby status update: `written` (what was received) and `flushed` (what the slot may
   * forget: its confirmed flush position). `flushed` is the caller's decision, see the source.
   */
  sendStatus(written: bigint, flushed: bigint, replyRequested = false): void {
    if (!this.started || this.endedError !== undefined) return;
    const b = Buffer.alloc(34);
    b[0] = 0x72; // r
    b.writeBigUInt64BE(written, 1);
    b.writeBigUInt64BE(flushed, 9);
    b.writeBigUInt64BE(flushed, 17);
    b.writeBigInt64BE(BigInt(Date.now() - PG_EPOCH_MS) * 1000n, 25);
    b[33] = replyRequested ? 1 : 0;
    this.connection.sendCopyFromChunk(b);
  }

  /** Stops reading the socket (the server's send buffer fills, then it waits): backpressure. */
  pause(): void {
    this.connection.stream.pause();
  }

  resume(): void {
    this.connection.stream.resume();
  }

  /** Ends the connection (the server releases the slot); at most `timeoutMs`, then the socket is destroyed. */
  async close(timeoutMs = 5000): Promise<void> {
    this.endedError ??= new Error('closed');
    const connection = this.connection;
    connection.stream.resume();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.client.end().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          connection.stream.destroy();
          resolve();
        }, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
}
