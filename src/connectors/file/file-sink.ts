import { statSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Sink, SinkWriter, SinkWriterContext } from '../../api/sink.js';
import { makeDirectories } from '../../util/make-directories.js';
import { checkFileOptions, checkPath, checkWholeNumber } from './file-options.js';

export interface FileSinkOptions<T> {
  /** Turns a record into one line (without the newline); default: strings as they are, else JSON. */
  readonly format?: (value: T) => string;
  /** Characters buffered before a write is issued: an integer >= 1. */
  readonly bufferBytes?: number;
}

const SINK_OPTION_NAMES = { format: true, bufferBytes: true } as const satisfies Record<keyof FileSinkOptions<unknown>, true>;

/**
 * Writes records as lines into `<dir>/part-<subtask>`, flushed and synced at every checkpoint.
 * At least once: a run that starts without state (a fresh job, or a restart before the first
 * checkpoint completed, whose sources begin again) starts the file anew; a run restored from a
 * checkpoint or savepoint (also resumed with another parallelism) appends to what is there,
 * so what was written before the checkpoint stays and the records replayed after it appear
 * again. The exactly-once file sink commits files per checkpoint instead.
 */
export class FileSink<T> implements Sink<T> {
  private readonly bufferBytes: number;
  private readonly options: FileSinkOptions<T>;

  constructor(
    readonly dir: string,
    options: FileSinkOptions<T> = {},
  ) {
    checkPath('file sink', dir, 'give a directory for the part files');
    this.options = checkFileOptions('file sink', options, SINK_OPTION_NAMES);
    // NaN never flushed before a checkpoint (everything stayed in memory); -1 flushed at every record.
    this.bufferBytes = checkWholeNumber('file sink', 'bufferBytes', this.options.bufferBytes, 1, Number.MAX_SAFE_INTEGER, 'the characters buffered before a write') ?? 1 << 16;
  }

  async createWriter(ctx: SinkWriterContext): Promise<SinkWriter<T>> {
    const dir = resolve(this.dir);
    try {
      await makeDirectories(dir);
    } catch (e) {
      throw directoryError(dir, e);
    }
    // Always O_APPEND: a write lands at the end, never at a position an older handle remembers.
    const file = join(dir, `part-${ctx.subtaskIndex}`);
    let handle;
    try {
      handle = await open(file, 'a');
    } catch (e) {
      throw await partFileError(dir, file, e);
    }
    if (ctx.restoredCheckpointId === undefined) await handle.truncate(0);
    return new FileWriter<T>(handle, this.options.format ?? defaultFormat, this.bufferBytes);
  }
}

/**
 * The output directory cannot be made: one line naming the path and the fix. No cause: the
 * job's root cause is this message, not Node's `ENOTDIR: not a directory, mkdir` and its stack.
 */
function directoryError(dir: string, e: unknown): Error {
  const { code, syscall, path = dir } = e as NodeJS.ErrnoException;
  if (code === 'ENOTDIR') {
    const file = nonDirectoryOnPath(dir) ?? path;
    const within = file === dir ? '' : ` (on the way to '${dir}')`;
    return new Error(`file sink: '${file}'${within} is a file, not a directory; give a directory for the part files`);
  }
  if (code === 'EACCES' || code === 'EPERM') {
    if (syscall === 'mkdir') return new Error(`file sink: cannot create '${path}' (${code}): grant write access to '${dirname(path)}' or give another directory`);
    return new Error(`file sink: cannot reach '${dir}' (${code}): grant access to the directories above it or give another directory`);
  }
  return new Error(`file sink: cannot create the directory '${dir}': ${(e as Error).message}`);
}

/** The first of `dir` and its parents that exists and is not a directory (stat of a path below a file says ENOTDIR of the whole path). */
function nonDirectoryOnPath(dir: string): string | undefined {
  for (let p = dir; ; p = dirname(p)) {
    try {
      return statSync(p).isDirectory() ? undefined : p;
    } catch {
      if (dirname(p) === p) return undefined;
    }
  }
}

/** A part file cannot be opened for appending: one line naming the path and the fix. */
async function partFileError(dir: string, file: string, e: unknown): Promise<Error> {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return new Error(`file sink: '${file}' is a directory, not a part file; remove it or give another directory`);
  if (code === 'EACCES' || code === 'EPERM') {
    const exists = await stat(file).then(
      () => true,
      () => false,
    );
    // An existing part file is opened, so only it needs write access; a new one is created in the directory.
    if (exists) return new Error(`file sink: cannot write '${file}' (${code}): grant write access to it or give another directory`);
    return new Error(`file sink: cannot write into '${dir}' (${code}): grant write access or give another directory`);
  }
  return new Error(`file sink: cannot open '${file}' for appending: ${(e as Error).message}`);
}

function defaultFormat(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

class FileWriter<T> implements SinkWriter<T> {
  private parts: string[] = [];
  private size = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly format: (value: T) => string,
    private readonly bufferBytes: number,
  ) {}

  write(value: T): void | Promise<void> {
    const line = this.format(value) + '\n';
    this.parts.push(line);
    this.size += line.length;
    if (this.size >= this.bufferBytes) return this.flush();
  }

  /** At a checkpoint: everything before the barrier is on disk. */
  prepareCommit(): Promise<void> {
    return this.flush(true);
  }

  /** Writes are issued one after the other, in order (a flush while another runs waits for it). */
  private writing: Promise<void> = Promise.resolve();

  flush(endOfInput = false): Promise<void> {
    const text = this.parts.length > 0 ? this.parts.join('') : undefined;
    this.parts = [];
    this.size = 0;
    const handle = this.handle;
    this.writing = this.writing.then(async () => {
      if (text !== undefined) await handle.write(text);
      if (endOfInput) await handle.sync();
    });
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.handle.close();
  }
}
