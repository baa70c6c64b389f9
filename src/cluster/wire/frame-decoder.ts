/**
 * Length-prefixed frames on a byte stream (TCP): a u32 big-endian payload length, then the
 * payload. A decoder takes chunks as they arrive and returns the complete payloads.
 */
export const FRAME_HEADER_BYTES = 4;

export class FrameTooLargeError extends Error {
  override readonly name = 'FrameTooLargeError';
}

export function frameHeader(payloadBytes: number): Buffer {
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  h.writeUInt32BE(payloadBytes, 0);
  return h;
}

export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrameBytes: number) {}

  /** Appends a chunk; returns every frame now complete, in order. */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      if (this.buffered < FRAME_HEADER_BYTES) break;
      const head = this.contiguous(FRAME_HEADER_BYTES);
      const length = head.readUInt32BE(0);
      if (length > this.maxFrameBytes) {
        throw new FrameTooLargeError(`a frame of ${length} bytes exceeds the limit of ${this.maxFrameBytes} bytes: the peer is not a Sluice peer of this version, or a record batch is too large`);
      }
      if (this.buffered < FRAME_HEADER_BYTES + length) break;
      const all = this.contiguous(FRAME_HEADER_BYTES + length);
      frames.push(all.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length));
      this.consume(FRAME_HEADER_BYTES + length);
    }
    return frames;
  }

  /** The first n buffered bytes in one buffer (merging chunks only when needed). */
  private contiguous(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) return first;
    const merged = Buffer.concat(this.chunks, this.buffered);
    this.chunks = [merged];
    return merged;
  }

  private consume(n: number): void {
    let left = n;
    while (left > 0) {
      const first = this.chunks[0]!;
      if (first.length <= left) {
        this.chunks.shift();
        left -= first.length;
      } else {
        this.chunks[0] = first.subarray(left);
        left = 0;
      }
    }
    this.buffered -= n;
  }
}
