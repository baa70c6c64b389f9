import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { InputStatus, ReaderOutput, Source, SourceReader } from '../../api/source.js';

/** A file to read and the byte offset of the next line: the position a checkpoint keeps. */
export interface FileSplit {
  readonly path: string;
  offset: number;
}

export interface FileSourceOptions {
  /** Bytes read at a time. */
  readonly chunkBytes?: number;
}

/**
 * Reads text files line by line (UTF-8, '\n' or '\r\n'). A path may be a file or a directory
 * (its files, sorted by name). Bounded; position = file and byte offset.
 */
export class FileSource implements Source<string, FileSplit> {
  readonly boundedness = 'bounded' as const;
  constructor(
    readonly path: string,
    private readonly options: FileSourceOptions = {},
  ) {}

  async createSplits(): Promise<FileSplit[]> {
    const p = resolve(this.path);
    let s;
    try {
      s = await stat(p);
    } catch {
      throw new Error(`file source: '${this.path}' does not exist (resolved to ${p}); check the path`);
    }
    if (s.isFile()) return [{ path: p, offset: 0 }];
    if (!s.isDirectory()) throw new Error(`file source: '${p}' is neither a file nor a directory`);
    const names = (await readdir(p, { withFileTypes: true })).filter((d) => d.isFile() && !d.name.startsWith('.')).map((d) => d.name);
    return names.sort().map((n) => ({ path: join(p, n), offset: 0 }));
  }

  createReader(): SourceReader<string, FileSplit> {
    return new FileReader(this.options.chunkBytes ?? 1 << 20);
  }
}

class FileReader implements SourceReader<string, FileSplit> {
  private readonly queue: FileSplit[] = [];
  private current: FileSplit | undefined;
  private handle: FileHandle | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  /** File offset of buffer[0]. */
  private bufferOffset = 0;
  private pos = 0;
  private eof = false;
  private reading: Promise<void> | undefined;
  private failure: Error | undefined;
  private noMore = false;

  constructor(private readonly chunkBytes: number) {}

  addSplits(splits: readonly FileSplit[]): void {
    for (const s of splits) this.queue.push({ ...s });
  }

  noMoreSplits(): void {
    this.noMore = true;
  }

  pollNext(output: ReaderOutput<string>): InputStatus {
    if (this.failure !== undefined) throw this.failure;
    if (this.reading !== undefined) return 'nothing';
    if (this.current === undefined) {
      const next = this.queue.shift();
      if (next === undefined) return this.noMore ? 'end' : 'nothing';
      this.current = next;
      this.buffer = Buffer.alloc(0);
      this.bufferOffset = next.offset;
      this.pos = 0;
      this.eof = false;
      this.startRead();
      return 'nothing';
    }
    const nl = this.buffer.indexOf(10, this.pos);
    if (nl >= 0) {
      const end = nl > this.pos && this.buffer[nl - 1] === 13 ? nl - 1 : nl;
      const line = this.buffer.toString('utf8', this.pos, end);
      this.pos = nl + 1;
      this.current.offset = this.bufferOffset + this.pos;
      output.collect(line);
      return 'more';
    }
    if (!this.eof) {
      this.startRead();
      return 'nothing';
    }
    if (this.pos < this.buffer.length) {
      const line = this.buffer.toString('utf8', this.pos);
      this.pos = this.buffer.length;
      this.current.offset = this.bufferOffset + this.pos;
      output.collect(line);
      return 'more';
    }
    void this.handle?.close();
    this.handle = undefined;
    this.current = undefined;
    return 'more';
  }

  private startRead(): void {
    const split = this.current!;
    this.reading = (async () => {
      try {
        if (this.handle === undefined) {
          try {
            this.handle = await open(split.path, 'r');
          } catch (e) {
            throw new Error(`file source: cannot open '${split.path}': ${(e as Error).message}`);
          }
        }
        const rest = this.buffer.subarray(this.pos);
        const chunk = Buffer.allocUnsafe(this.chunkBytes);
        const readAt = this.bufferOffset + this.buffer.length;
        const { bytesRead } = await this.handle.read(chunk, 0, this.chunkBytes, readAt);
        if (bytesRead === 0) this.eof = true;
        this.bufferOffset += this.pos;
        this.buffer = Buffer.concat([rest, chunk.subarray(0, bytesRead)]);
        this.pos = 0;
      } catch (e) {
        this.failure = e as Error;
      } finally {
        this.reading = undefined;
      }
    })();
  }

  isAvailable(): Promise<void> {
    return this.reading ?? Promise.resolve();
  }

  snapshotState(): FileSplit[] {
    const out: FileSplit[] = [];
    if (this.current !== undefined) out.push({ ...this.current });
    for (const s of this.queue) out.push({ ...s });
    return out;
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }
}
