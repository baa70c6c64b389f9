import { checkKnownOptions } from '../../util/known-options.js';
import { connect, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { InputStatus, ReaderOutput, Source, SourceReader } from '../../api/source.js';

export interface SocketTextSourceOptions {
  readonly host: string;
  readonly port: number;
  /** Separates records in the text (default '\n'; with '\n' a trailing '\r' is dropped too, as in Flink). */
  readonly delimiter?: string;
  /**
   * Times to reconnect, 500 ms apart, when the connection cannot be made or ends (Flink's
   * maxRetry): 0 (the default) ends the source when the server closes the connection and fails
   * the job when none can be made; -1 reconnects for ever.
   */
  readonly maxRetry?: number;
}

export interface SocketSplit {
  readonly host: string;
  readonly port: number;
}

/** Lines queued before the reader stops reading the socket (TCP then pushes back on the writer). */
const MAX_QUEUED_LINES = 8192;
const RETRY_DELAY_MS = 500;
/** Lines a poll emits at most. */
const LINES_PER_POLL = 1024;

const SOCKET_OPTION_NAMES = { host: true, port: true, delimiter: true, maxRetry: true } as const satisfies Record<keyof SocketTextSourceOptions, true>;

/**
 * Lines of text from a TCP server (Flink's socketTextStream), for trying things out with
 * `nc -lk 9999`. Not replayable: what was read before a failure is not read again after the
 * restart (the reader reconnects and goes on with what the server sends then), so a job with
 * it is at most once end to end, whatever the sinks. One reader; it applies backpressure by
 * pausing the socket.
 */
export class SocketTextSource implements Source<string, SocketSplit> {
  readonly splitKind = 'socket';
  readonly boundedness = 'unbounded' as const;
  private readonly delimiter: string;
  private readonly maxRetry: number;

  constructor(private readonly options: SocketTextSourceOptions) {
    checkKnownOptions('socketTextStream', options, SOCKET_OPTION_NAMES);
    const { host, port } = options;
    if (typeof host !== 'string' || host === '') throw new TypeError('socketTextStream: the host must be a non-empty string');
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`socketTextStream: the port must be an integer in [1, 65535], got ${port}`);
    this.delimiter = options.delimiter ?? '\n';
    if (this.delimiter === '') throw new RangeError('socketTextStream: the delimiter must not be empty');
    this.maxRetry = options.maxRetry ?? 0;
    if (!Number.isInteger(this.maxRetry) || this.maxRetry < -1) throw new RangeError(`socketTextStream: maxRetry must be -1 (for ever) or a whole number >= 0, got ${this.maxRetry}`);
  }

  createSplits(): SocketSplit[] {
    return [{ host: this.options.host, port: this.options.port }];
  }

  createReader(): SourceReader<string, SocketSplit> {
    return new SocketTextReader(this.delimiter, this.maxRetry);
  }
}

class SocketTextReader implements SourceReader<string, SocketSplit> {
  private split: SocketSplit | undefined;
  private socket: Socket | undefined;
  private readonly lines: string[] = [];
  private head = 0;
  private partial = '';
  private decoder = new StringDecoder('utf8');
  private ended = false;
  private failure: Error | undefined;
  private retries = 0;
  private paused = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delimiter: string,
    private readonly maxRetry: number,
  ) {}

  addSplits(splits: readonly SocketSplit[]): void {
    if (splits.length === 0) return;
    this.split = splits[0];
    this.open();
  }

  noMoreSplits(): void {
    if (this.split === undefined) this.ended = true;
  }

  private open(): void {
    const { host, port } = this.split!;
    this.decoder = new StringDecoder('utf8');
    this.partial = '';
    const socket = connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onText(this.decoder.write(chunk)));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (this.socket !== socket) return;
      this.failure = new Error(
        `socketTextStream: the connection to ${host}:${port} failed (${err.code ?? err.message}); is a server listening there (for a try, \`nc -lk ${port}\`)?`,
      );
    });
    socket.on('close', () => {
      if (this.socket !== socket || this.closed) return;
      this.onText(this.decoder.end());
      // Flink emits what follows the last delimiter when the connection ends.
      if (this.partial !== '') this.lines.push(this.partial);
      this.partial = '';
      this.socket = undefined;
      if (this.maxRetry === -1 || this.retries < this.maxRetry) {
        this.retries++;
        this.failure = undefined;
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.open();
        }, RETRY_DELAY_MS);
      } else if (this.failure === undefined) {
        this.ended = true;
      }
      this.notify();
    });
  }

  private onText(text: string): void {
    if (text === '') return;
    const parts = (this.partial + text).split(this.delimiter);
    this.partial = parts.pop()!;
    for (let line of parts) {
      if (this.delimiter === '\n' && line.endsWith('\r')) line = line.slice(0, -1);
      this.lines.push(line);
    }
    if (this.lines.length - this.head >= MAX_QUEUED_LINES && !this.paused) {
      this.paused = true;
      this.socket?.pause();
    }
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  pollNext(output: ReaderOutput<string>): InputStatus {
    const until = Math.min(this.lines.length, this.head + LINES_PER_POLL);
    for (; this.head < until; this.head++) output.collect(this.lines[this.head]!);
    if (this.head === this.lines.length) {
      this.lines.length = 0;
      this.head = 0;
    }
    const queued = this.lines.length - this.head;
    if (this.paused && queued < MAX_QUEUED_LINES / 2) {
      this.paused = false;
      this.socket?.resume();
    }
    if (queued > 0) return 'more';
    // A failed connection with no retry left (the close handler clears the failure when it retries).
    if (this.failure !== undefined && this.socket === undefined) throw this.failure;
    return this.ended ? 'end' : 'nothing';
  }

  isAvailable(): Promise<void> {
    if (this.lines.length > this.head || this.ended || (this.failure !== undefined && this.socket === undefined)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }

  /** Nothing to replay: the split only says where to reconnect. */
  snapshotState(): SocketSplit[] {
    return this.split === undefined ? [] : [this.split];
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.socket?.destroy();
    this.notify();
  }
}
