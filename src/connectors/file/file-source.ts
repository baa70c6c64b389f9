import type { Stats } from 'node:fs';
import { lstat, open, readdir, readlink, stat, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { InputStatus, ReaderOutput, Source, SourceReader, SourceReaderContext } from '../../api/source.js';
import { checkFileOptions, checkPath, checkWholeNumber } from './file-options.js';

/** A file to read and the byte offset of the next line: the position a checkpoint keeps. */
export interface FileSplit {
  readonly path: string;
  offset: number;
}

export interface FileSourceOptions {
  /** Bytes read at a time: an integer in [1, 2^31 - 1] (the most one read of Node's takes). */
  readonly chunkBytes?: number;
  /**
   * 'on-request' (default, as Flink's FileSource): the JobManager hands out one file at a time
   * to a reader that asks, so a reader done with its small files takes the next one while
   * another is still in a large file. 'static': each reader gets its share of the files at
   * start (round-robin by name).
   */
  readonly splitAssignment?: 'static' | 'on-request';
}

const SOURCE_OPTION_NAMES = { chunkBytes: true, splitAssignment: true } as const satisfies Record<keyof FileSourceOptions, true>;

/**
 * Reads text files line by line (UTF-8, '\n' or '\r\n'; invalid bytes become U+FFFD, as in
 * Flink's text format). A path may be a file or a directory (its files and links to files,
 * sorted by name). Bounded; position = file and byte offset.
 */
export class FileSource implements Source<string, FileSplit> {
  readonly splitKind = 'file';
  readonly boundedness = 'bounded' as const;
  readonly splitAssignment: 'static' | 'on-request';
  private readonly chunkBytes: number;
  constructor(
    readonly path: string,
    options: FileSourceOptions = {},
  ) {
    checkPath('file source', path, 'give a file or a directory to read');
    options = checkFileOptions('file source', options, SOURCE_OPTION_NAMES);
    // 0 read nothing and the job finished; NaN, -1 and 1.5 failed at the first read with a
    // bare RangeError; above 2^31 - 1 Node's read aborts the process.
    this.chunkBytes = checkWholeNumber('file source', 'chunkBytes', options.chunkBytes, 1, 2 ** 31 - 1, 'the bytes read at a time') ?? 1 << 20;
    const assignment = options.splitAssignment ?? 'on-request';
    if (assignment !== 'static' && assignment !== 'on-request') throw new RangeError(`file source: splitAssignment must be 'static' or 'on-request', got ${String(options.splitAssignment)}`);
    this.splitAssignment = assignment;
  }

  async createSplits(): Promise<FileSplit[]> {
    const p = resolve(this.path);
    let s;
    try {
      s = await stat(p);
    } catch (e) {
      const code = errorCode(e);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        const link = await brokenLinkTarget(p);
        if (link !== undefined) throw new Error(`file source: '${this.path}' is a symbolic link to '${link}', which does not exist (resolved to ${p}); fix the link or give its target`);
        throw new Error(`file source: '${this.path}' does not exist (resolved to ${p}); check the path`);
      }
      throw accessError(`cannot read '${this.path}' (resolved to ${p})`, e);
    }
    if (s.isFile()) return [{ path: p, offset: 0 }];
    if (!s.isDirectory()) throw new Error(`file source: '${p}' is neither a file nor a directory`);
    let entries;
    try {
      entries = await readdir(p, { withFileTypes: true });
    } catch (e) {
      throw accessError(`cannot list the directory '${p}'`, e);
    }
    // Regular files, and symbolic links to regular files (followed, as Flink's listing does);
    // subdirectories and links to them are skipped (not recursive).
    const names: string[] = [];
    for (const d of entries) {
      if (d.name.startsWith('.')) continue;
      if (d.isFile() || (d.isSymbolicLink() && (await linkTarget(join(p, d.name))).isFile())) names.push(d.name);
    }
    return names.sort().map((n) => ({ path: join(p, n), offset: 0 }));
  }

  createReader(ctx: SourceReaderContext): SourceReader<string, FileSplit> {
    return new FileReader(this.chunkBytes, this.splitAssignment === 'on-request' ? ctx : undefined);
  }
}

/** What the symbolic link `link` in a listed directory points to; a broken link is an error naming it. */
async function linkTarget(link: string): Promise<Stats> {
  try {
    return await stat(link);
  } catch (e) {
    const code = errorCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new Error(`file source: '${link}' is a symbolic link to '${(await brokenLinkTarget(link)) ?? '?'}', which does not exist; fix or remove the link`);
    }
    if (code === 'ELOOP') throw new Error(`file source: '${link}' is a symbolic link in a loop (ELOOP); fix or remove the link`);
    throw accessError(`cannot follow the symbolic link '${link}'`, e);
  }
}

/** The target of `path` when it is a symbolic link (whose target is missing: stat said so), else undefined. */
async function brokenLinkTarget(path: string): Promise<string | undefined> {
  try {
    return (await lstat(path)).isSymbolicLink() ? await readlink(path) : undefined;
  } catch {
    return undefined;
  }
}

/** `file source: <what>: permission denied (EACCES); grant read access ...`; another error with its own message. No cause: the job's root cause is this message, not Node's stack. */
function accessError(what: string, e: unknown): Error {
  const code = errorCode(e);
  if (code === 'EACCES' || code === 'EPERM') return new Error(`file source: ${what}: permission denied (${code}); grant read access to it and its parent directories, or give another path`);
  return new Error(`file source: ${what}: ${(e as Error).message}`);
}

function errorCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
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
  /** The current file's last chunk is in (a read returned less than a chunk). */
  private lastChunkIn = false;
  private reading: Promise<void> | undefined;
  private failure: Error | undefined;
  private noMore = false;
  /** On-request: a split request is out, its answer not in yet. */
  private requested = false;
  private splitArrived: (() => void) | undefined;

  /** `requests`: the reader context of an on-request source (it asks for one file at a time). */
  constructor(
    private readonly chunkBytes: number,
    private readonly requests: SourceReaderContext | undefined,
  ) {}

  addSplits(splits: readonly FileSplit[]): void {
    for (const s of splits) this.queue.push({ ...s });
    this.answered();
  }

  noMoreSplits(): void {
    this.noMore = true;
    this.answered();
  }

  private answered(): void {
    this.requested = false;
    const wake = this.splitArrived;
    this.splitArrived = undefined;
    wake?.();
  }

  pollNext(output: ReaderOutput<string>): InputStatus {
    if (this.failure !== undefined) throw this.failure;
    // Ask for the next file once this one's last chunk is in, so the answer is there when it
    // ends. Not sooner: a reader that asked as soon as it had a file took the second of two
    // large files before the other reader's first request arrived, and read both alone.
    if (this.requests !== undefined && this.queue.length === 0 && !this.requested && !this.noMore && (this.current === undefined || this.lastChunkIn)) {
      this.requested = true;
      this.requests.sendSplitRequest();
    }
    if (this.reading !== undefined) return 'nothing';
    if (this.current === undefined) {
      const next = this.queue.shift();
      if (next === undefined) return this.noMore ? 'end' : 'nothing';
      this.current = next;
      this.buffer = Buffer.alloc(0);
      this.bufferOffset = next.offset;
      this.pos = 0;
      this.eof = false;
      this.lastChunkIn = false;
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
        if (bytesRead < this.chunkBytes) this.lastChunkIn = true;
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
    if (this.reading !== undefined) return this.reading;
    if (this.current === undefined && this.queue.length === 0 && !this.noMore) return new Promise((resolve) => (this.splitArrived = resolve));
    return Promise.resolve();
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
