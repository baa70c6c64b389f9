import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, readdir, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SinkWriter, SinkWriterContext } from '../../api/sink.js';
import { TwoPhaseCommitSink, type TwoPhaseCommitContext, type TwoPhaseCommitState } from '../../api/two-phase-commit-sink.js';
import { makeDirectories } from '../../util/make-directories.js';
import { checkFileOptions, checkPath, checkWholeNumber } from './file-options.js';

export interface ExactlyOnceFileSinkOptions<T> {
  /**
   * Turns a record into one line (without the newline); default: strings as they are, else
   * JSON. A line may not contain a line break: the output is read back one record per line
   * (`FileSource`, `readCommittedLines`).
   */
  readonly format?: (value: T) => string;
  /** Characters buffered in memory before they are appended to the transaction's in-progress file. */
  readonly bufferBytes?: number;
}

/**
 * One transaction: the records one subtask wrote between two checkpoints. Plain data (it is
 * kept in checkpoints); every file name follows from it, so a restored job finds the files.
 */
export interface FileTransaction {
  /** Absolute output directory. */
  readonly dir: string;
  readonly subtask: number;
  /** Parallelism of the sink when the transaction began (restores at another one skip the cleanup of lingering files). */
  readonly parallelism: number;
  readonly attempt: number;
  /** Transaction number of the writer, from 0. */
  readonly seq: number;
  /** Random per writer: names never collide, not even with a later run of the same job (attempt numbers start at 0 again). */
  readonly writerId: string;
}

/** The committed (visible) name of a transaction's file: `part-<subtask>-<attempt>-<seq>-<writerId>`. */
export function committedFileName(txn: FileTransaction): string {
  return `part-${txn.subtask}-${txn.attempt}-${txn.seq}-${txn.writerId}`;
}

function inProgressPath(txn: FileTransaction): string {
  return join(txn.dir, `.${committedFileName(txn)}.inprogress`);
}

function pendingPath(txn: FileTransaction): string {
  return join(txn.dir, `.${committedFileName(txn)}.pending`);
}

function finalPath(txn: FileTransaction): string {
  return join(txn.dir, committedFileName(txn));
}

/** Hidden files of this sink: `.part-<subtask>-<attempt>-<seq>-<writerId>.(inprogress|pending)`. */
const HIDDEN_FILE = /^\.part-(\d+)-(\d+)-\d+-[0-9a-f]+\.(inprogress|pending)$/;

/** What this process knows of a transaction it began; gone once the transaction is committed or aborted. */
interface LiveTransaction {
  readonly txn: FileTransaction;
  readonly writerKey: string;
  phase: 'open' | 'pre-committing' | 'pre-committed' | 'aborted';
  lines: string[];
  bufferedChars: number;
  records: number;
  handle: FileHandle | undefined;
  /** File operations of the transaction, one after the other. */
  queue: Promise<void>;
}

const SINK_OPTION_NAMES = { format: true, bufferBytes: true } as const satisfies Record<keyof ExactlyOnceFileSinkOptions<unknown>, true>;

/**
 * Flink's FileSink, exactly once: a transaction per subtask and checkpoint. Records go to a
 * hidden in-progress file (`.part-...inprogress`); at the barrier it is flushed, fsynced and
 * renamed to a hidden pending file (`.part-...pending`); when the checkpoint completes the
 * pending file is renamed to its visible name (`part-...`) and the directory fsynced. Readers
 * of the directory (files whose names do not start with `.`, as `FileSource` and
 * `readCommittedLines` read them) see committed records only, each exactly once, one per line.
 *
 * Without checkpointing, each subtask commits one file at the end of its input. A transaction
 * without records commits no file. On start, a subtask commits the pending transactions of the
 * restored checkpoint, aborts the open one and deletes its lingering hidden files (transactions
 * of failed attempts that no checkpoint completed). One job per directory.
 */
export class ExactlyOnceFileSink<T> extends TwoPhaseCommitSink<T, FileTransaction> {
  private readonly format: (value: T) => string;
  private readonly bufferChars: number;
  private readonly live = new Map<string, LiveTransaction>();
  /** Commits under way by transaction name: a second commit of the same transaction joins the first. */
  private readonly committing = new Map<string, Promise<void>>();
  /** Writer id and next transaction number per subtask and attempt. */
  private readonly writers = new Map<string, { writerId: string; nextSeq: number }>();

  constructor(
    readonly dir: string,
    options: ExactlyOnceFileSinkOptions<T> = {},
  ) {
    super();
    checkPath('exactly-once file sink', dir, 'give a directory for the part files');
    const o = checkFileOptions('exactly-once file sink', options, SINK_OPTION_NAMES);
    this.format = o.format ?? defaultFormat;
    this.bufferChars = checkWholeNumber('exactly-once file sink', 'bufferBytes', o.bufferBytes, 1, Number.MAX_SAFE_INTEGER, 'the characters buffered before a write') ?? 1 << 16;
  }

  override async createWriter(ctx: SinkWriterContext, restoredState: readonly unknown[]): Promise<SinkWriter<T>> {
    const dir = resolve(this.dir);
    await ensureWritableDir(dir);
    const key = writerKey(ctx.subtaskIndex, ctx.attemptNumber);
    this.writers.set(key, { writerId: randomBytes(4).toString('hex'), nextSeq: 0 });
    // Commits the restored pending transactions, aborts the restored open one, begins one (no file yet).
    const inner = await super.createWriter(ctx, restoredState);
    await this.deleteLingeringFiles(dir, ctx, restoredState as readonly TwoPhaseCommitState<FileTransaction>[], key);
    return new SerializedWriter(inner, () => this.abandon(key));
  }

  beginTransaction(ctx: TwoPhaseCommitContext): FileTransaction {
    const key = writerKey(ctx.subtaskIndex, ctx.attemptNumber);
    const w = this.writers.get(key);
    if (w === undefined) throw new Error(`exactly-once file sink: no writer for subtask ${ctx.subtaskIndex} (attempt ${ctx.attemptNumber})`);
    const txn: FileTransaction = {
      dir: resolve(this.dir),
      subtask: ctx.subtaskIndex,
      parallelism: ctx.parallelism,
      attempt: ctx.attemptNumber,
      seq: w.nextSeq++,
      writerId: w.writerId,
    };
    this.live.set(committedFileName(txn), {
      txn,
      writerKey: key,
      phase: 'open',
      lines: [],
      bufferedChars: 0,
      records: 0,
      handle: undefined,
      queue: Promise.resolve(),
    });
    return txn;
  }

  invoke(txn: FileTransaction, value: T): void | Promise<void> {
    const t = this.liveOrThrow(txn, 'write to');
    if (t.phase !== 'open') throw new Error(`exactly-once file sink: write to transaction ${committedFileName(txn)}, which is ${t.phase}`);
    const line = this.format(value);
    if (line.includes('\n') || line.includes('\r')) {
      throw new Error(`exactly-once file sink: a formatted record contains a line break (${JSON.stringify(line.slice(0, 80))}); the output holds one record per line`);
    }
    t.lines.push(line + '\n');
    t.bufferedChars += line.length + 1;
    t.records++;
    if (t.bufferedChars >= this.bufferChars) return this.enqueue(t, () => this.writeBuffered(txn, t));
  }

  preCommit(txn: FileTransaction): Promise<void> {
    const t = this.liveOrThrow(txn, 'pre-commit');
    if (t.phase !== 'open') throw new Error(`exactly-once file sink: pre-commit of transaction ${committedFileName(txn)}, which is ${t.phase}`);
    t.phase = 'pre-committing';
    return this.enqueue(t, async () => {
      if (t.phase === 'aborted') throw new Error(`exactly-once file sink: transaction ${committedFileName(txn)} was aborted during its pre-commit`);
      await this.writeBuffered(txn, t);
      const handle = t.handle;
      if (handle !== undefined) {
        await handle.sync();
        await handle.close();
        t.handle = undefined;
        await rename(inProgressPath(txn), pendingPath(txn));
        await fsyncDir(txn.dir);
      }
      t.phase = 'pre-committed';
    });
  }

  /** Renames the pending file to its visible name. Idempotent: a committed transaction commits again as a no-op. */
  commit(txn: FileTransaction): Promise<void> {
    const name = committedFileName(txn);
    const under = this.committing.get(name);
    if (under !== undefined) return under;
    const p = this.commitOnce(txn).finally(() => this.committing.delete(name));
    this.committing.set(name, p);
    return p;
  }

  private async commitOnce(txn: FileTransaction): Promise<void> {
    const name = committedFileName(txn);
    const t = this.live.get(name);
    if (t !== undefined) {
      await t.queue;
      if (t.phase !== 'pre-committed') throw new Error(`exactly-once file sink: commit of transaction ${name}, which is ${t.phase}`);
    }
    const pending = pendingPath(txn);
    const final = finalPath(txn);
    const [pendingExists, finalExists] = await Promise.all([exists(pending), exists(final)]);
    if (finalExists) {
      // Committed before (e.g. before a failure, or by the attempt that failed).
      if (pendingExists) throw new Error(`exactly-once file sink: both ${pending} and ${final} exist; the committed file is kept, the pending one left for inspection`);
    } else if (pendingExists) {
      await rename(pending, final);
      await fsyncDir(txn.dir);
    } else if (t !== undefined && t.records > 0) {
      throw new Error(`exactly-once file sink: transaction ${name} has ${t.records} records but neither ${pending} nor ${final} exists`);
    }
    // Else: a transaction without records, which writes no file.
    this.live.delete(name);
  }

  /** Deletes the transaction's in-progress and pending files; a committed file stays. */
  abort(txn: FileTransaction): Promise<void> {
    const name = committedFileName(txn);
    const t = this.live.get(name);
    const removeFiles = async (): Promise<void> => {
      await unlinkIfExists(inProgressPath(txn));
      await unlinkIfExists(pendingPath(txn));
      this.live.delete(name);
    };
    if (t === undefined) return removeFiles();
    t.phase = 'aborted';
    t.lines = [];
    t.bufferedChars = 0;
    return this.enqueue(t, async () => {
      const handle = t.handle;
      t.handle = undefined;
      await handle?.close();
      await removeFiles();
    });
  }

  /** The writer closed (end of the job, failure or cancelation): its transactions still open or pre-committing cannot commit any more. */
  private async abandon(key: string): Promise<void> {
    const aborts: Promise<void>[] = [];
    for (const t of this.live.values()) {
      if (t.writerKey !== key || (t.phase !== 'open' && t.phase !== 'pre-committing')) continue;
      aborts.push(this.abort(t.txn));
    }
    await Promise.all(aborts);
    this.writers.delete(key);
  }

  private liveOrThrow(txn: FileTransaction, what: string): LiveTransaction {
    const t = this.live.get(committedFileName(txn));
    if (t === undefined) throw new Error(`exactly-once file sink: ${what} transaction ${committedFileName(txn)}, which this process did not begin or already ended`);
    return t;
  }

  private enqueue(t: LiveTransaction, op: () => Promise<void>): Promise<void> {
    const p = t.queue.then(op);
    t.queue = p.catch(() => {});
    return p;
  }

  private async writeBuffered(txn: FileTransaction, t: LiveTransaction): Promise<void> {
    if (t.phase === 'aborted' || t.lines.length === 0) return;
    const text = t.lines.join('');
    t.lines = [];
    t.bufferedChars = 0;
    // 'wx': a name that exists already is a bug, never overwritten.
    t.handle ??= await open(inProgressPath(txn), 'wx');
    await t.handle.writeFile(text);
  }

  /**
   * Deletes the hidden files of this subtask left by earlier attempts: transactions that no
   * completed checkpoint holds (the restored ones were committed or aborted just before).
   * Skipped when the restored state came from another subtask or parallelism (a rescale):
   * another subtask may be committing those files.
   */
  private async deleteLingeringFiles(
    dir: string,
    ctx: SinkWriterContext,
    restored: readonly TwoPhaseCommitState<FileTransaction>[],
    key: string,
  ): Promise<void> {
    for (const s of restored) {
      const txns = [...s.pending.map(([, t]) => t), ...(s.current === undefined ? [] : [s.current])];
      if (txns.some((t) => t.subtask !== ctx.subtaskIndex || t.parallelism !== ctx.parallelism || t.dir !== dir)) return;
    }
    // What this process still knows of earlier attempts of the subtask is void now.
    for (const [name, t] of this.live) if (t.txn.subtask === ctx.subtaskIndex && t.writerKey !== key) this.live.delete(name);
    const mine = this.writers.get(key)?.writerId;
    for (const name of await readdir(dir)) {
      const m = HIDDEN_FILE.exec(name);
      if (m === null || Number(m[1]) !== ctx.subtaskIndex) continue;
      if (mine !== undefined && name.includes(`-${mine}.`)) continue;
      // Never the files of a later attempt: a writer of a stale attempt (one canceled while it
      // was being deployed, on a TaskManager the JobManager already gave up on) may still be
      // opening while the attempt that replaced it pre-commits; deleting its pending files
      // would lose committed records. (Files of an earlier run with higher attempt numbers stay.)
      if (Number(m[2]) > ctx.attemptNumber) continue;
      await unlinkIfExists(join(dir, name));
    }
  }
}

/**
 * The committed lines of a directory written by `ExactlyOnceFileSink`: every visible file
 * (name not starting with `.`) in name order, one record per line. Empty if the directory does not exist.
 */
export async function readCommittedLines(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile() && !d.name.startsWith('.')).map((d) => d.name);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const lines: string[] = [];
  for (const name of names.sort()) {
    const text = await readFile(join(dir, name), 'utf8');
    if (text.length === 0) continue;
    const parts = text.split('\n');
    if (parts[parts.length - 1] === '') parts.pop();
    for (const p of parts) lines.push(p.endsWith('\r') ? p.slice(0, -1) : p);
  }
  return lines;
}

/**
 * Wraps the two-phase-commit writer so `close` first abandons this writer's transactions that
 * can no longer commit (late writes of a failed attempt leave no files) and then waits for the
 * commits under way. The runtime already delivers notifications one at a time; running them
 * through one chain here keeps that true for direct users of the writer too.
 */
class SerializedWriter<T> implements SinkWriter<T> {
  private notifications: Promise<void> = Promise.resolve();

  constructor(
    private readonly inner: SinkWriter<T>,
    private readonly onClosed: () => Promise<void>,
  ) {}

  write(value: T, timestampMs: number | undefined): void | Promise<void> {
    return this.inner.write(value, timestampMs);
  }

  flush(endOfInput: boolean): void | Promise<void> {
    return this.inner.flush?.(endOfInput);
  }

  prepareCommit(checkpointId: number): void | Promise<void> {
    return this.inner.prepareCommit?.(checkpointId);
  }

  snapshotState(checkpointId: number): unknown[] {
    return this.inner.snapshotState?.(checkpointId) ?? [];
  }

  notifyCheckpointComplete(checkpointId: number): Promise<void> {
    return this.serialize(() => this.inner.notifyCheckpointComplete?.(checkpointId));
  }

  notifyCheckpointAborted(checkpointId: number): Promise<void> {
    return this.serialize(() => this.inner.notifyCheckpointAborted?.(checkpointId));
  }

  async close(): Promise<void> {
    // First (synchronously) stop the transactions that can no longer commit, so that writes
    // still under way after a failure leave no files behind; then let the commits finish.
    const abandoned = this.onClosed();
    try {
      await this.notifications;
      await this.inner.close?.();
    } finally {
      await abandoned;
    }
  }

  private serialize(op: () => void | Promise<void>): Promise<void> {
    const p = this.notifications.then(op);
    this.notifications = p.catch(() => {});
    return p;
  }
}

function writerKey(subtask: number, attempt: number): string {
  return `${subtask}/${attempt}`;
}

function defaultFormat(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

async function ensureWritableDir(dir: string): Promise<void> {
  try {
    await makeDirectories(dir);
    await access(dir, constants.W_OK);
  } catch (e) {
    throw new Error(`exactly-once file sink: output directory '${dir}' is not writable: ${(e as Error).message}`, { cause: e });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

async function unlinkIfExists(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** Makes renames in the directory durable (Windows cannot open a directory for fsync; its renames are durable on return). */
async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
