import type { InputStatus, ReaderOutput, Source, SourceReader, SourceReaderContext } from '../../api/source.js';
import { NonRecoverableError } from '../../runtime/recovery/non-recoverable-error.js';
import { processLogger } from '../../util/logger.js';
import { previewValue } from '../../util/preview.js';
import { checkPostgresSinkOptions, connect, quoteIdent, quoteLiteral } from '../postgres/connection.js';
import { sqlState } from '../postgres/pg-failures.js';
import {
  UNCHANGED_TOAST,
  type CdcRow,
  type ChangeRecord,
  type ChangeRecordOf,
  type DebeziumJsonMessage,
  type PostgresCdcSourceOptions,
  type PostgresCdcSplit,
} from './cdc-types.js';
import { ChangePosition } from './change-position.js';
import { formatLsn, isLsn, parseLsn } from './lsn.js';
import { pgMicrosToEpochMs, pgMicrosToIso, textDecoderFor, type TextDecoder } from './pg-text-values.js';
import { decodePgOutput, UNCHANGED_TOASTED, type PgOutputMessage, type Relation, type TupleValue } from './pgoutput-decoder.js';
import { ReplicationStream } from './replication-stream.js';
import { debeziumMessages } from './debezium-json.js';
import { checkSlotFits, parseTables, prepareServer, type CapturedTable } from './start-checks.js';

const WHAT = 'postgres cdc source';

const OPTION_NAMES = {
  connection: true,
  slot: true,
  publication: true,
  tables: true,
  startup: true,
  createSlot: true,
  createPublication: true,
  before: true,
  statusIntervalMs: true,
  queueChangesMax: true,
  slotBusyTimeoutMs: true,
  log: true,
  format: true,
  topicPrefix: true,
} as const satisfies Record<keyof PostgresCdcSourceOptions, true>;

/**
 * A PostgreSQL change-data-capture source: reads a logical replication slot with the built-in
 * `pgoutput` plugin and emits one record per row change of the captured tables, exactly once
 * with a checkpointing job (see docs/connectors.md). Type the rows per table:
 *
 * ```ts
 * const changes = env.fromSource(
 *   postgresCdcSource<{ 'public.orders': Order; 'public.customers': Customer }>({ slot: 'sluice', publication: 'shop', tables: ['public.orders', 'public.customers'] }),
 *   'changes',
 * ).setParallelism(1);
 * ```
 */
export function postgresCdcSource<Tables extends object = Record<string, CdcRow>>(
  options: PostgresCdcSourceOptions<Tables> & { readonly format?: 'records' },
): PostgresCdcSource<ChangeRecordOf<Tables>>;
/** Debezium's JSON messages instead of records (`format: 'debezium-json'`), for a `KafkaSink`. */
export function postgresCdcSource(options: PostgresCdcSourceOptions & { readonly format: 'debezium-json'; readonly topicPrefix: string }): PostgresCdcSource<DebeziumJsonMessage>;
export function postgresCdcSource(options: PostgresCdcSourceOptions): PostgresCdcSource<unknown> {
  return new PostgresCdcSource<unknown>(options);
}

/** The source `postgresCdcSource` makes: one split (the slot), read by subtask 0. */
export class PostgresCdcSource<T = ChangeRecord> implements Source<T, PostgresCdcSplit> {
  readonly boundedness = 'unbounded' as const;
  readonly splitKind = 'postgres-cdc';

  constructor(readonly options: PostgresCdcSourceOptions) {
    checkOptions(options);
  }

  async createSplits(parallelism: number): Promise<PostgresCdcSplit[]> {
    if (parallelism > 1) {
      this.log(`${WHAT}: the source runs at parallelism ${parallelism}, but a slot has one reader: subtask 0 reads, the others stay idle (and hold back watermarks); give it setParallelism(1)`);
    }
    const client = await connect(this.options.connection ?? {}, WHAT);
    try {
      const resumeLsn = await prepareServer(client, this.options, (m) => this.log(m));
      this.log(`${WHAT}: a job without state starts at ${resumeLsn} of slot '${this.options.slot}'`);
      return [{ slot: this.options.slot, resumeLsn }];
    } finally {
      await client.end().catch(() => {});
    }
  }

  assignSplit(): number {
    return 0;
  }

  createReader(ctx: SourceReaderContext): SourceReader<T, PostgresCdcSplit> {
    return new PostgresCdcReader<T>(this, ctx);
  }

  /** @internal */
  log(message: string): void {
    if (this.options.log !== undefined) this.options.log(message);
    else processLogger('sluice').info(message);
  }
}

function checkOptions(o: PostgresCdcSourceOptions): void {
  checkPostgresSinkOptions(WHAT, o, OPTION_NAMES);
  if (typeof o.slot !== 'string' || !/^[a-z0-9_]{1,63}$/.test(o.slot)) {
    throw new Error(`${WHAT}: slot must be a replication slot name of lower-case letters, digits and underscores (at most 63), got ${previewValue(o.slot, 80)}`);
  }
  if (typeof o.publication !== 'string' || o.publication.length === 0 || o.publication.length > 63 || /["\0]/.test(o.publication)) {
    throw new Error(`${WHAT}: publication must be a publication name (1 to 63 characters, no double quote), got ${previewValue(o.publication, 80)}`);
  }
  if (!Array.isArray(o.tables) || o.tables.length === 0 || !o.tables.every((t: unknown) => typeof t === 'string')) {
    throw new Error(`${WHAT}: tables must be a non-empty array of 'schema.table' or 'table' names, got ${previewValue(o.tables, 80)}`);
  }
  parseTables(o.tables);
  const s: unknown = o.startup;
  if ((s as string) === 'initial') {
    throw new Error(`${WHAT}: startup 'initial' (a snapshot of the tables, then their changes) is not supported yet; use 'latest' or { lsn: 'X/Y' }`);
  }
  if (!(s === undefined || s === 'latest' || (typeof s === 'object' && s !== null && isLsn((s as { lsn?: unknown }).lsn) && Object.keys(s).length === 1))) {
    throw new Error(`${WHAT}: startup must be 'latest' or { lsn: 'X/Y' } (an LSN as pg_current_wal_lsn() shows it), got ${previewValue(s, 80)}`);
  }
  for (const name of ['createSlot', 'createPublication'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'boolean') throw new Error(`${WHAT}: ${name} must be true or false, got ${previewValue(o[name], 40)}`);
  }
  if (o.before !== undefined && o.before !== 'key' && o.before !== 'full') throw new Error(`${WHAT}: before must be 'key' or 'full', got ${previewValue(o.before, 40)}`);
  if (o.format !== undefined && o.format !== 'records' && o.format !== 'debezium-json') throw new Error(`${WHAT}: format must be 'records' or 'debezium-json', got ${previewValue(o.format, 40)}`);
  if (o.format === 'debezium-json' && !(typeof o.topicPrefix === 'string' && /^[A-Za-z0-9._-]+$/.test(o.topicPrefix))) {
    throw new Error(`${WHAT}: format 'debezium-json' needs topicPrefix, Debezium's topic.prefix (letters, digits, '.', '_', '-'), got ${previewValue(o.topicPrefix, 40)}`);
  }
  if (o.format !== 'debezium-json' && o.topicPrefix !== undefined) throw new Error(`${WHAT}: topicPrefix is for format 'debezium-json' only`);
  for (const name of ['statusIntervalMs', 'queueChangesMax', 'slotBusyTimeoutMs'] as const) {
    const v = o[name];
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) throw new Error(`${WHAT}: ${name} must be an integer >= 1, got ${previewValue(v, 40)}`);
  }
}

/** A relation as the source uses it: its columns' decoders, and the captured table it is (undefined: not captured). */
interface SourceRelation {
  readonly relation: Relation;
  readonly decoders: readonly TextDecoder[];
  readonly table: CapturedTable | undefined;
  /** Its primary key columns (Debezium's message key). */
  readonly keyColumns: readonly string[];
}

type Item =
  | { readonly kind: 'begin'; readonly commitLsn: bigint; readonly xid: number; readonly commitTs: string; readonly commitMs: number }
  | { readonly kind: 'change'; readonly lsn: bigint; readonly message: PgOutputMessage; readonly relations: readonly SourceRelation[]; readonly bytes: number }
  | { readonly kind: 'commit'; readonly endLsn: bigint }
  | { readonly kind: 'progress'; readonly lsn: bigint };

const CHANGES_PER_POLL = 512;
/** Bytes of changes read ahead (their pgoutput size) before the connection is paused, whatever their count: large values. */
const QUEUE_BYTES_MAX = 64 << 20;
const SLOT_IN_USE = '55006';

class PostgresCdcReader<T> implements SourceReader<T, PostgresCdcSplit> {
  private split: PostgresCdcSplit | undefined;
  private position: ChangePosition | undefined;
  private readonly tables: CapturedTable[];
  private readonly relations = new Map<number, SourceRelation>();
  private queue: Item[] = [];
  private head = 0;
  private paused = false;
  /** pgoutput bytes of the changes in the queue (approximately what they hold). */
  private queuedBytes = 0;
  private stream: ReplicationStream | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  private waiter: (() => void) | undefined;
  /** The transaction being emitted. */
  private txn: Extract<Item, { kind: 'begin' }> | undefined;
  /** The highest WAL position received, for the status updates' write position. */
  private received = 0n;
  /** The server's WAL end as it last said (XLogData and keepalive headers), for the lag metric. */
  private serverWalEnd = 0n;
  /** The WAL position of the last change emitted, for the lag metric. */
  private emittedLsn = 0n;
  /** The slot's confirmed flush position as this reader last set it (never lowered). */
  private confirmed = 0n;
  /** Checkpoint id -> the position it may confirm once complete. */
  private readonly pendingConfirms = new Map<number, bigint>();
  private readonly queueMax: number;
  /** Primary key columns of the captured tables (`schema.table`), read at start (Debezium keys). */
  private primaryKeys = new Map<string, string[]>();
  private database = '';

  constructor(
    private readonly source: PostgresCdcSource<T>,
    private readonly ctx: SourceReaderContext,
  ) {
    this.tables = parseTables(source.options.tables);
    this.queueMax = source.options.queueChangesMax ?? 10_000;
    const group = ctx.metricGroup?.addGroup('PostgresCdcSourceReader');
    group?.gauge('replicationLagBytes', () => this.lagBytes());
    group?.gauge('replicationLagMs', () => this.lagMs());
  }

  /** WAL bytes the server has that the reader has not emitted or passed yet (0 before streaming). */
  private lagBytes(): number {
    const p = this.position;
    if (p === undefined || this.serverWalEnd === 0n) return 0;
    const at = p.confirmableLsn > this.emittedLsn ? p.confirmableLsn : this.emittedLsn;
    return this.serverWalEnd > at ? Number(this.serverWalEnd - at) : 0;
  }

  /** How long ago the transaction being emitted, or the next one received, committed; 0 when all received changes are emitted. */
  private lagMs(): number {
    let commitMs: number | undefined;
    if (this.txn !== undefined) commitMs = this.txn.commitMs;
    else {
      const end = Math.min(this.queue.length, this.head + 1000);
      for (let i = this.head; i < end && commitMs === undefined; i++) {
        const item = this.queue[i]!;
        if (item.kind === 'begin') commitMs = item.commitMs;
      }
    }
    return commitMs === undefined ? 0 : Math.max(0, this.ctx.nowMs() - commitMs);
  }

  addSplits(splits: readonly PostgresCdcSplit[]): void {
    for (const s of splits) {
      if (this.split !== undefined) throw new Error(`${WHAT}: a reader got a second split (slot '${s.slot}'); the source has one split`);
      if (s.slot !== this.source.options.slot) {
        throw new NonRecoverableError(`${WHAT}: the restored position is of slot '${s.slot}', but the source reads slot '${this.source.options.slot}': start the job without that state, or name the slot it had`);
      }
      this.split = s;
      this.position = new ChangePosition(s);
    }
  }

  noMoreSplits(): void {
    if (this.split === undefined) return; // subtasks other than 0 have nothing to read
    this.loop ??= this.run().catch((e: unknown) => {
      if (!this.closed) this.fail(e instanceof Error ? e : new Error(String(e)));
    });
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private async run(): Promise<void> {
    const o = this.source.options;
    const split = this.split!;
    const deadline = Date.now() + (o.slotBusyTimeoutMs ?? 30_000);
    for (;;) {
      const stream = await ReplicationStream.open(o.connection ?? {}, WHAT);
      if (this.closed) {
        await stream.close();
        return;
      }
      this.stream = stream;
      const db = (await stream.query<{ db: string }>('SELECT current_database() AS db'))[0]!.db;
      this.database = db;
      if (o.format === 'debezium-json') {
        const keys = await stream.query<{ t: string; cols: string[] | string }>(
          `SELECT n.nspname || '.' || c.relname AS t, array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum)) AS cols
             FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey) WHERE i.indisprimary GROUP BY 1`,
        );
        // The simple query protocol returns text: an array as '{a,b}' unless pg parsed it.
        this.primaryKeys = new Map(keys.map((k) => [k.t, Array.isArray(k.cols) ? k.cols : k.cols.replace(/^\{|\}$/g, '').split(',')]));
      }
      const slot = (
        await stream.query<{ plugin: string | null; slot_type: string; database: string | null; confirmed_flush_lsn: string | null; active_pid: number | null }>(
          `SELECT plugin, slot_type, database, confirmed_flush_lsn::text, active_pid FROM pg_replication_slots WHERE slot_name = ${quoteLiteral(o.slot)}`,
        )
      )[0];
      if (slot === undefined) {
        throw new NonRecoverableError(
          `${WHAT}: replication slot '${o.slot}' does not exist any more; the job's position (${split.resumeLsn}) is in it, and the changes since are gone with it. ` +
            `Start the job without its checkpoint (startup 'latest' creates the slot again) to read on from now`,
        );
      }
      checkSlotFits(o.slot, slot, db);
      const confirmed = parseLsn(slot.confirmed_flush_lsn ?? '0/0');
      const resume = parseLsn(split.resumeLsn);
      if (confirmed > resume) {
        throw new NonRecoverableError(
          `${WHAT}: slot '${o.slot}' confirmed ${slot.confirmed_flush_lsn} already, past the job's position ${split.resumeLsn}: the server no longer has the changes between ` +
            `(was the job restored from an older checkpoint or savepoint, or the slot advanced by something else?). Start the job without that state to read on from the slot's position`,
        );
      }
      this.confirmed = confirmed;
      const command = `START_REPLICATION SLOT ${quoteIdent(o.slot)} LOGICAL ${split.resumeLsn} (proto_version '1', publication_names ${quoteLiteral(quoteIdent(o.publication))})`;
      try {
        await stream.start(command, {
          xlogData: (walStart, walEnd, payload) => {
            if (walEnd > this.serverWalEnd) this.serverWalEnd = walEnd;
            this.receive(walStart, payload);
          },
          keepalive: (walEnd, reply) => {
            if (walEnd > this.received) this.received = walEnd;
            if (walEnd > this.serverWalEnd) this.serverWalEnd = walEnd;
            this.push({ kind: 'progress', lsn: walEnd });
            if (reply) this.sendStatus();
          },
          ended: (e) => {
            if (!this.closed) this.fail(new Error(`${WHAT}: replication from slot '${o.slot}' ended: ${e.message}`, { cause: e }));
          },
        });
      } catch (e) {
        await stream.close();
        this.stream = undefined;
        if (sqlState(e) === SLOT_IN_USE && Date.now() < deadline && !this.closed) {
          // The connection of the attempt before has not been let go of yet.
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        throw new Error(`${WHAT}: START_REPLICATION of slot '${o.slot}' failed: ${(e as Error).message}`, { cause: e });
      }
      if (this.closed) return; // close() ends the stream
      this.source.log(`${WHAT}: subtask ${this.ctx.subtaskIndex} streams slot '${o.slot}' from ${split.resumeLsn}${split.partial === undefined ? '' : ` (skipping ${split.partial.emitted} changes of the transaction committed at ${split.partial.commitLsn})`}`);
      this.statusTimer = setInterval(() => this.sendStatus(), o.statusIntervalMs ?? 10_000);
      this.statusTimer.unref();
      return;
    }
  }

  /** Standby status: the received position, and as flushed only what a completed checkpoint covers. */
  private sendStatus(): void {
    this.stream?.sendStatus(this.received > this.confirmed ? this.received : this.confirmed, this.confirmed);
  }

  private push(item: Item): void {
    this.queue.push(item);
    if (item.kind === 'change') this.queuedBytes += item.bytes;
    if (!this.paused && (this.queue.length - this.head >= this.queueMax || this.queuedBytes >= QUEUE_BYTES_MAX)) {
      this.paused = true;
      this.stream?.pause();
    }
    this.wake();
  }

  /** An XLogData message, decoded now (its bytes are pg's to reuse after the call). */
  private receive(walStart: bigint, payload: Buffer): void {
    if (this.failure !== undefined || this.closed) return;
    if (walStart > this.received) this.received = walStart;
    let m: PgOutputMessage;
    try {
      m = decodePgOutput(payload);
    } catch (e) {
      this.fail(e as Error);
      return;
    }
    switch (m.tag) {
      case 'begin':
        this.push({ kind: 'begin', commitLsn: m.finalLsn, xid: m.xid, commitTs: pgMicrosToIso(m.commitTimeUs), commitMs: pgMicrosToEpochMs(m.commitTimeUs) });
        return;
      case 'commit':
        this.push({ kind: 'commit', endLsn: m.endLsn });
        return;
      case 'relation': {
        const r = m.relation;
        const table = this.tables.find((t) => t.schema === r.schema && t.name === r.table);
        const keyColumns = table === undefined ? [] : (this.primaryKeys.get(`${table.schema}.${table.name}`) ?? []);
        this.relations.set(r.relationId, { relation: r, decoders: r.columns.map((c) => textDecoderFor(c.typeOid)), table, keyColumns });
        return;
      }
      case 'insert':
      case 'update':
      case 'delete': {
        const rel = this.relations.get(m.relationId);
        if (rel === undefined) return this.fail(new Error(`${WHAT}: a change of relation ${m.relationId} came before its Relation message`));
        this.push({ kind: 'change', lsn: walStart, message: m, relations: [rel], bytes: payload.length });
        return;
      }
      case 'truncate': {
        const rels: SourceRelation[] = [];
        for (const id of m.relationIds) {
          const rel = this.relations.get(id);
          if (rel === undefined) return this.fail(new Error(`${WHAT}: a truncate of relation ${id} came before its Relation message`));
          rels.push(rel);
        }
        this.push({ kind: 'change', lsn: walStart, message: m, relations: rels, bytes: payload.length });
        return;
      }
      case 'ignored':
        return;
    }
  }

  pollNext(output: ReaderOutput<T>): InputStatus {
    if (this.failure !== undefined) throw this.failure;
    const position = this.position;
    if (position === undefined) return 'nothing';
    let emitted = 0;
    while (this.head < this.queue.length && emitted < CHANGES_PER_POLL) {
      const item = this.queue[this.head++]!;
      switch (item.kind) {
        case 'begin':
          position.begin(item.commitLsn);
          this.txn = item;
          break;
        case 'commit':
          position.commit(item.endLsn);
          this.txn = undefined;
          break;
        case 'progress':
          position.progress(item.lsn);
          break;
        case 'change': {
          this.queuedBytes -= item.bytes;
          const seq = position.change();
          if (seq === undefined) break;
          const txn = this.txn!;
          for (const rel of item.relations) {
            if (rel.table === undefined) continue;
            this.emittedLsn = item.lsn;
            if (this.source.options.format === 'debezium-json') {
              const messages = debeziumMessages(item.message, {
                topicPrefix: this.source.options.topicPrefix!,
                database: this.database,
                relation: rel.relation,
                keyColumns: rel.keyColumns,
                lsn: item.lsn,
                commitLsn: txn.commitLsn,
                txId: txn.xid,
                commitMs: txn.commitMs,
                nowMs: this.ctx.nowMs(),
              });
              for (const message of messages) output.collect(message as T, txn.commitMs);
              emitted += messages.length;
              continue;
            }
            output.collect(changeRecord(item.message, rel, rel.table, { lsn: formatLsn(item.lsn), commitLsn: formatLsn(txn.commitLsn), seq, txId: txn.xid, commitTs: txn.commitTs, schema: rel.relation.schema, table: rel.relation.table }) as T, txn.commitMs);
            emitted++;
          }
          break;
        }
      }
    }
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.paused && this.queue.length - this.head < this.queueMax / 2 && this.queuedBytes < QUEUE_BYTES_MAX / 2) {
      this.paused = false;
      this.stream?.resume();
    }
    return emitted > 0 || this.head < this.queue.length ? 'more' : 'nothing';
  }

  isAvailable(): Promise<void> {
    if (this.failure !== undefined || this.head < this.queue.length) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiter = resolve;
      setTimeout(() => this.wake(), this.split === undefined ? 1000 : 200).unref();
    });
  }

  snapshotState(checkpointId: number): PostgresCdcSplit[] {
    if (this.position === undefined) return [];
    this.pendingConfirms.set(checkpointId, this.position.confirmableLsn);
    return [this.position.snapshot(this.split!.slot)];
  }

  /** The checkpoint is complete: the slot may forget what it covers (its confirmed flush position moves there). */
  notifyCheckpointComplete(checkpointId: number): void {
    const lsn = this.pendingConfirms.get(checkpointId);
    for (const id of [...this.pendingConfirms.keys()]) if (id <= checkpointId) this.pendingConfirms.delete(id);
    if (lsn === undefined || lsn <= this.confirmed) return;
    this.confirmed = lsn;
    this.sendStatus();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    await this.loop;
    clearInterval(this.statusTimer);
    await this.stream?.close();
  }
}

type SourceInfo = ChangeRecord['source'];

/** The record of one change message. */
function changeRecord(m: PgOutputMessage, rel: SourceRelation, table: CapturedTable, source: SourceInfo): ChangeRecord {
  switch (m.tag) {
    case 'insert':
      return { op: 'c', table: table.given, before: null, after: row(rel, m.newTuple, false), source };
    case 'update':
      return { op: 'u', table: table.given, before: m.oldTuple === undefined ? null : row(rel, m.oldTuple, m.oldKind === 'K'), after: row(rel, m.newTuple, false), source };
    case 'delete':
      return { op: 'd', table: table.given, before: row(rel, m.oldTuple, m.oldKind === 'K'), after: null, source };
    case 'truncate':
      return { op: 't', table: table.given, before: null, after: null, source };
    default:
      throw new Error(`${WHAT}: not a change: ${m.tag}`);
  }
}

/** A tuple as a row; `keysOnly`: an old key tuple, whose other columns are sent as NULL and left out. */
function row(rel: SourceRelation, tuple: readonly TupleValue[], keysOnly: boolean): CdcRow {
  const out: CdcRow = {};
  const columns = rel.relation.columns;
  if (tuple.length !== columns.length) throw new Error(`${WHAT}: a change of ${rel.relation.schema}.${rel.relation.table} has ${tuple.length} columns, its relation ${columns.length}`);
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    if (keysOnly && !c.isKey) continue;
    const v = tuple[i]!;
    out[c.name] = v === null ? null : v === UNCHANGED_TOASTED ? UNCHANGED_TOAST : rel.decoders[i]!(v);
  }
  return out;
}

