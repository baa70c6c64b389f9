import { Packr } from 'msgpackr';
import { decode, encode } from './checksummed-file.js';
import { MalformedMetadataError, parseCheckpointMetadata, type CheckpointMetadata } from './snapshot-format.js';
import { CorruptCheckpointError } from './storage-errors.js';

/**
 * `_metadata` bytes: the checksummed-file envelope (kind metadata) around msgpack of the
 * CheckpointMetadata object (plain maps with string keys, inline state as msgpack bin,
 * absent handles as nil). Checked with parseCheckpointMetadata on encode and on decode.
 */

const packr = new Packr({
  useRecords: false,
  moreTypes: false,
  structuredClone: false,
  mapsAsObjects: true,
  encodeUndefinedAsNil: true,
});

/** Throws (a bug, not an operating error) when `metadata` breaks an invariant. */
export function encodeMetadata(metadata: CheckpointMetadata): Uint8Array {
  const checked = checkOnWrite(metadata);
  return encode(packr.pack(checked), 'metadata');
}

function checkOnWrite(metadata: CheckpointMetadata): CheckpointMetadata {
  try {
    return parseCheckpointMetadata(metadata);
  } catch (e) {
    if (e instanceof MalformedMetadataError) {
      throw new Error(`refusing to write checkpoint ${String(metadata.checkpointId)}: ${e.message}`, { cause: e });
    }
    throw e;
  }
}

/**
 * Decodes `_metadata` bytes read from `file`. Envelope damage, undecodable msgpack and
 * broken invariants all throw CorruptCheckpointError naming `file` and `checkpointId`.
 */
export function decodeMetadata(bytes: Uint8Array, context: { file: string; checkpointId: number | undefined }): CheckpointMetadata {
  const { payload } = decode(bytes, { ...context, expectedKind: 'metadata' });
  let value: unknown;
  try {
    value = packr.unpack(payload);
  } catch (e) {
    throw new CorruptCheckpointError(context.file, context.checkpointId, `undecodable metadata: ${(e as Error).message}`);
  }
  try {
    return parseCheckpointMetadata(value);
  } catch (e) {
    if (e instanceof MalformedMetadataError) throw new CorruptCheckpointError(context.file, context.checkpointId, e.message);
    throw e;
  }
}
