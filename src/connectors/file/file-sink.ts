import { open, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Sink, SinkWriter } from '../../api/sink.js';
import { makeDirectories } from '../../util/make-directories.js';

export interface FileSinkOptions<T> {
  /** Turns a record into one line (without the newline); default: strings as they are, else JSON. */
  readonly format?: (value: T) => string;
  /** Bytes buffered before a write is issued. */
  readonly bufferBytes?: number;
}

/**
 * Writes records as lines into `<dir>/part-<subtask>`, flushed and synced at every checkpoint.
 * At-least-once: after a restart the file is appended to, so records replayed from the last
 * checkpoint appear again. The exactly-once file sink commits files per checkpoint instead.
 */
export class FileSink<T> implements Sink<T> {
  constructor(
    readonly dir: string,
    private readonly options: FileSinkOptions<T> = {},
  ) {}

  async createWriter(ctx: { subtaskIndex: number; attemptNumber: number }): Promise<SinkWriter<T>> {
    const dir = resolve(this.dir);
    await makeDirectories(dir);
    // A fresh job starts the file anew; a restarted attempt keeps what was written.
    const handle = await open(join(dir, `part-${ctx.subtaskIndex}`), ctx.attemptNumber === 0 ? 'w' : 'a');
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

  async flush(endOfInput = false): Promise<void> {
    if (this.parts.length > 0) {
      const text = this.parts.join('');
      this.parts = [];
      this.size = 0;
      await this.handle.write(text);
    }
    if (endOfInput) await this.handle.sync();
  }

  async close(): Promise<void> {
    await this.flush();
    await this.handle.close();
  }
}
