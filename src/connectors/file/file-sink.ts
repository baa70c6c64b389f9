import { open, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Sink, SinkWriter, SinkWriterContext } from '../../api/sink.js';
import { makeDirectories } from '../../util/make-directories.js';

export interface FileSinkOptions<T> {
  /** Turns a record into one line (without the newline); default: strings as they are, else JSON. */
  readonly format?: (value: T) => string;
  /** Bytes buffered before a write is issued. */
  readonly bufferBytes?: number;
}

/**
 * Writes records as lines into `<dir>/part-<subtask>`, flushed and synced at every checkpoint.
 * At least once: a run that starts without state (a fresh job, or a restart before the first
 * checkpoint completed, whose sources begin again) starts the file anew; a run restored from a
 * checkpoint or savepoint (also resumed with another parallelism) appends to what is there,
 * so what was written before the checkpoint stays and the records replayed after it appear
 * again. The exactly-once file sink commits files per checkpoint instead.
 */
export class FileSink<T> implements Sink<T> {
  constructor(
    readonly dir: string,
    private readonly options: FileSinkOptions<T> = {},
  ) {}

  async createWriter(ctx: SinkWriterContext): Promise<SinkWriter<T>> {
    const dir = resolve(this.dir);
    await makeDirectories(dir);
    // Always O_APPEND: a write lands at the end, never at a position an older handle remembers.
    const handle = await open(join(dir, `part-${ctx.subtaskIndex}`), 'a');
    if (ctx.restoredCheckpointId === undefined) await handle.truncate(0);
    return new FileWriter<T>(handle, this.options.format ?? defaultFormat, this.options.bufferBytes ?? 1 << 16);
  }
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
