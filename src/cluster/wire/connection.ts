import type { Socket } from 'node:net';
import { Packr, Unpackr, type Options } from 'msgpackr';
import { FrameDecoder, FrameTooLargeError, FRAME_HEADER_BYTES } from './frame-decoder.js';

/** Largest frame a peer may send: a record batch or a deployment with its state. */
export const DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024;

/**
 * msgpack with record structures (msgpackr): a structure (an object's keys) is written the
 * first time it appears on a connection and referenced afterwards, so a batch of records of
 * the same shape costs little more than their values. Each direction of a connection has its
 * own encoder/decoder pair, used in order (`sequential`).
 */
function wireOptions(): Options {
  return { useRecords: true, sequential: true, bundleStrings: true, mapsAsObjects: false, moreTypes: true, useBigIntExtension: true, int64AsType: 'bigint' };
}

/** How messages of one connection become frames and back; one instance per connection (it may keep state, used in order). */
export interface MessageCodec<Out, In> {
  /** The whole frame: a u32 big-endian payload length, then the payload. */
  encodeFrame(message: Out): Buffer;
  decode(payload: Buffer): In;
}

/** Every message as msgpack (msgpackr with record structures, sequential). */
export class MsgpackMessageCodec<Out, In> implements MessageCodec<Out, In> {
  private readonly packr = new Packr(wireOptions());
  private readonly unpackr = new Unpackr(wireOptions());

  encodeFrame(message: Out): Buffer {
    const payload = this.packr.pack(message);
    const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
    frame.writeUInt32BE(payload.length, 0);
    frame.set(payload, FRAME_HEADER_BYTES);
    return frame;
  }

  decode(payload: Buffer): In {
    return this.unpackr.unpack(payload) as In;
  }
}

/** Connections with frames held back by a cork (see `Connection.send`). */
const corkedConnections = new Set<{ uncork: () => void }>();

/**
 * Writes out the frames every connection holds corked, now rather than on the next tick. A
 * TaskManager calls it after each task slice: its scheduler runs many slices in one turn,
 * so a frame of an earlier slice (a batch or a credit another process waits for) must not
 * wait for the slices after it.
 */
export function flushCorkedWrites(): void {
  for (const c of corkedConnections) c.uncork();
}

/**
 * A message connection over a TCP socket: length-prefixed msgpack frames, typed messages in
 * both directions. Closing (by either side, or an error) is reported once.
 */
/** What every message of a connection is: an object tagged by a string `t`. */
export interface TaggedMessage {
  readonly t: string;
}

export class Connection<Out extends TaggedMessage, In extends TaggedMessage> {
  private readonly decoder: FrameDecoder;
  private handler: ((message: In) => void) | undefined;
  private readonly early: In[] = [];
  private readonly closeListeners: ((error: Error | undefined) => void)[] = [];
  private closedWith: { error: Error | undefined } | undefined;
  bytesSent = 0;
  bytesReceived = 0;
  /**
   * Messages sent in one turn of the event loop go out in one system call: the socket is
   * corked at the first and uncorked on the next tick (Node then writes them with writev).
   * On loopback a write costs tens of microseconds, and a task's turn sends many frames and
   * credits.
   */
  private corked = false;
  readonly uncork = (): void => {
    if (!this.corked) return;
    this.corked = false;
    corkedConnections.delete(this);
    this.socket.uncork();
  };

  constructor(
    readonly socket: Socket,
    readonly name: string,
    maxFrameBytes = DEFAULT_MAX_FRAME_BYTES,
    private readonly codec: MessageCodec<Out, In> = new MsgpackMessageCodec<Out, In>(),
  ) {
    this.decoder = new FrameDecoder(maxFrameBytes);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (e) => this.close(e));
    socket.on('close', () => this.close(undefined));
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Messages that arrived before a handler was set are delivered to it first. */
  onMessage(handler: (message: In) => void): void {
    this.handler = handler;
    while (this.early.length > 0 && this.handler === handler) this.deliver(handler, this.early.shift()!);
  }

  onClose(listener: (error: Error | undefined) => void): void {
    if (this.closedWith !== undefined) listener(this.closedWith.error);
    else this.closeListeners.push(listener);
  }

  /** Sends a message; false when the socket's buffer is full (wait for `drained()`). */
  send(message: Out): boolean {
    if (this.closedWith !== undefined) return false;
    const frame = this.codec.encodeFrame(message);
    this.bytesSent += frame.length;
    if (!this.corked) {
      this.corked = true;
      corkedConnections.add(this);
      this.socket.cork();
      process.nextTick(this.uncork);
    }
    return this.socket.write(frame);
  }

  /** Resolves when the socket's write buffer has drained (at once when it is not full). */
  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** Closes the connection after what was sent has gone out (a graceful end). */
  end(): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = { error: undefined };
    this.socket.end();
    for (const l of this.closeListeners.splice(0)) l(undefined);
  }

  /** Closes the connection; `error` says why (reported to close listeners). */
  close(error?: Error): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = { error };
    this.socket.destroy();
    for (const l of this.closeListeners.splice(0)) l(error);
  }

  private onData(chunk: Buffer): void {
    this.bytesReceived += chunk.length;
    let frames: Buffer[];
    try {
      frames = this.decoder.push(chunk);
    } catch (e) {
      this.close(e instanceof FrameTooLargeError ? e : new Error(`${this.name}: ${(e as Error).message}`));
      return;
    }
    for (const f of frames) {
      if (this.closedWith !== undefined) return;
      let message: In;
      try {
        message = this.codec.decode(f);
      } catch (e) {
        this.close(new Error(`${this.name}: undecodable message (${(e as Error).message}); is the peer a Sluice process of the same version?`));
        return;
      }
      if (!isTaggedMessage(message)) {
        this.close(new Error(`${this.name}: a message that is not a Sluice message (${describeValue(message)}); is the peer a Sluice process of the same version?`));
        return;
      }
      if (this.handler === undefined) this.early.push(message);
      else this.deliver(this.handler, message);
    }
  }

  /**
   * A message the handler cannot take (a peer that sends fields of the wrong type, or a bug
   * in handling it) closes this connection with the error, as a broken frame does: the
   * process goes on, and the side that owns the connection treats it as lost.
   */
  private deliver(handler: (message: In) => void, message: In): void {
    try {
      handler(message);
    } catch (e) {
      this.close(new Error(`${this.name}: handling a '${message.t}' message failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e }));
    }
  }
}

/** Every message on a Sluice connection is an object with a string tag `t`. */
function isTaggedMessage(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { t?: unknown }).t === 'string';
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object without a string field t';
  return `a ${typeof value}`;
}
