import { assert } from '../../util/assert.js';
import { checksumHex, crc32c } from './crc32c.js';
import { CorruptCheckpointError } from './storage-errors.js';

/**
 * The envelope of every file Sluice writes into checkpoint storage (`_metadata`, state
 * files): a 24-byte header, then the payload. Big-endian throughout.
 *
 *   offset size  field
 *   0      4     magic "SLCK" (53 4c 43 4b)
 *   4      2     format version, u16 (1)
 *   6      1     file kind, u8 (1 = metadata, 2 = state)
 *   7      1     reserved, u8, 0 in version 1
 *   8      8     payload length in bytes, u64 (at most 2^53 - 1)
 *   16     4     CRC-32C of the payload, u32
 *   20     4     CRC-32C of header bytes 0..19, u32
 *   24     n     payload
 *
 * The header checksum tells a damaged length field apart from a truncated file. Magic and
 * version stay at offsets 0 and 4 in every future version, so any version can be recognized.
 */

export const CHECKSUMMED_FILE_MAGIC = Uint8Array.of(0x53, 0x4c, 0x43, 0x4b);
export const CHECKSUMMED_FILE_VERSION = 1;
export const CHECKSUMMED_FILE_HEADER_BYTES = 24;

export type FileKind = 'metadata' | 'state';

const KIND_CODE: Record<FileKind, number> = { metadata: 1, state: 2 };
const KIND_OF_CODE = new Map<number, FileKind>(Object.entries(KIND_CODE).map(([k, c]) => [c, k as FileKind]));

export interface DecodedFile {
  readonly kind: FileKind;
  /** A view into the decoded bytes (not a copy). */
  readonly payload: Uint8Array;
  /** CRC-32C of the payload, as verified. */
  readonly checksum: number;
}

export interface DecodeContext {
  /** Named in errors: the absolute path (or in-memory pointer) the bytes came from. */
  readonly file: string;
  /** Named in errors; undefined when not known yet (a savepoint's _metadata). */
  readonly checkpointId: number | undefined;
  /** When given, a file of another kind is corrupt. */
  readonly expectedKind?: FileKind;
}

/** Wraps `payload` in the header. The result is a new buffer; `payload` is not retained. */
export function encode(payload: Uint8Array, kind: FileKind): Uint8Array {
  const out = new Uint8Array(CHECKSUMMED_FILE_HEADER_BYTES + payload.length);
  out.set(encodeHeader(payload, kind), 0);
  out.set(payload, CHECKSUMMED_FILE_HEADER_BYTES);
  return out;
}

/** The header alone, for writers that put it and the payload into the file separately (no copy of the payload). */
export function encodeHeader(payload: Uint8Array, kind: FileKind): Uint8Array {
  return encodeHeaderOf(payload.length, crc32c(payload), kind);
}

/**
 * The header of a payload known by its length and CRC-32C only, for writers that stream the
 * payload into the file and write the header last (spill-file-writer.ts).
 */
export function encodeHeaderOf(payloadLengthBytes: number, payloadChecksum: number, kind: FileKind): Uint8Array {
  assert(Number.isSafeInteger(payloadLengthBytes) && payloadLengthBytes >= 0, `a payload length is a safe non-negative integer, got ${payloadLengthBytes}`);
  const out = new Uint8Array(CHECKSUMMED_FILE_HEADER_BYTES);
  const view = new DataView(out.buffer);
  out.set(CHECKSUMMED_FILE_MAGIC, 0);
  view.setUint16(4, CHECKSUMMED_FILE_VERSION);
  view.setUint8(6, KIND_CODE[kind]);
  view.setUint8(7, 0);
  view.setBigUint64(8, BigInt(payloadLengthBytes));
  view.setUint32(16, payloadChecksum >>> 0);
  view.setUint32(20, crc32c(out.subarray(0, 20)));
  return out;
}

/**
 * Checks and unwraps a file written by `encode`. Throws CorruptCheckpointError naming the
 * file and checkpoint for: a file shorter than the header, bad magic, unknown version,
 * header checksum mismatch, unexpected kind, truncated or over-long payload, payload
 * checksum mismatch.
 */
export function decode(bytes: Uint8Array, context: DecodeContext): DecodedFile {
  const corrupt = (reason: string): CorruptCheckpointError => new CorruptCheckpointError(context.file, context.checkpointId, reason);
  const H = CHECKSUMMED_FILE_HEADER_BYTES;
  if (bytes.length < H) {
    throw corrupt(`truncated: ${bytes.length} bytes, shorter than the ${H}-byte header`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < CHECKSUMMED_FILE_MAGIC.length; i++) {
    if (bytes[i] !== CHECKSUMMED_FILE_MAGIC[i]) {
      throw corrupt(`bad magic: expected ${hex(CHECKSUMMED_FILE_MAGIC)}, found ${hex(bytes.subarray(0, 4))}; not a Sluice checkpoint file`);
    }
  }
  const version = view.getUint16(4);
  if (version !== CHECKSUMMED_FILE_VERSION) {
    throw corrupt(
      `unknown format version ${version}: this Sluice reads version ${CHECKSUMMED_FILE_VERSION}` +
        (version > CHECKSUMMED_FILE_VERSION ? '; the file was written by a newer Sluice' : ''),
    );
  }
  const headerChecksumExpected = view.getUint32(20);
  const headerChecksumFound = crc32c(bytes.subarray(0, 20));
  if (headerChecksumFound !== headerChecksumExpected) {
    throw corrupt(`header checksum mismatch: expected ${checksumHex(headerChecksumExpected)}, found ${checksumHex(headerChecksumFound)}`);
  }
  const kind = KIND_OF_CODE.get(view.getUint8(6));
  if (kind === undefined) throw corrupt(`unknown file kind ${view.getUint8(6)}`);
  if (view.getUint8(7) !== 0) throw corrupt(`reserved header byte is ${view.getUint8(7)}, expected 0`);
  if (context.expectedKind !== undefined && kind !== context.expectedKind) {
    throw corrupt(`holds ${kind}, expected ${context.expectedKind}`);
  }
  const lengthDeclared = view.getBigUint64(8);
  const lengthFound = bytes.length - H;
  if (lengthDeclared > BigInt(Number.MAX_SAFE_INTEGER) || Number(lengthDeclared) > lengthFound) {
    throw corrupt(`truncated: header declares ${lengthDeclared} payload bytes, file has ${lengthFound}`);
  }
  if (Number(lengthDeclared) < lengthFound) {
    throw corrupt(`${lengthFound - Number(lengthDeclared)} trailing bytes after the ${lengthDeclared}-byte payload`);
  }
  const payload = bytes.subarray(H);
  const checksumExpected = view.getUint32(16);
  const checksumFound = crc32c(payload);
  if (checksumFound !== checksumExpected) {
    throw corrupt(`checksum mismatch: expected ${checksumHex(checksumExpected)}, found ${checksumHex(checksumFound)}`);
  }
  return { kind, payload, checksum: checksumFound };
}

/** The payload checksum recorded in an encoded file's header, without verifying anything. */
export function recordedChecksum(encoded: Uint8Array): number {
  return new DataView(encoded.buffer, encoded.byteOffset, encoded.byteLength).getUint32(16);
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
