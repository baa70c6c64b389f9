import { describe, expect, it } from 'vitest';
import { crc32c } from './crc32c.js';
import { CHECKSUMMED_FILE_HEADER_BYTES, decode, encode } from './checksummed-file.js';
import { seededBytes } from './snapshot-test-data.js';
import { CorruptCheckpointError } from './storage-errors.js';

const ctx = { file: '/x/chk-12/_metadata', checkpointId: 12 };

function decodeError(bytes: Uint8Array, context: Parameters<typeof decode>[1] = ctx): CorruptCheckpointError {
  try {
    decode(bytes, context);
  } catch (e) {
    expect(e).toBeInstanceOf(CorruptCheckpointError);
    return e as CorruptCheckpointError;
  }
  throw new Error('decode accepted damaged bytes');
}

describe('checksummed file', () => {
  it('round-trips payloads of both kinds, empty ones too', () => {
    for (const [payload, kind] of [
      [seededBytes(1000, 3), 'state'],
      [new Uint8Array(0), 'metadata'],
    ] as const) {
      const encoded = encode(payload, kind);
      expect(encoded.length).toBe(CHECKSUMMED_FILE_HEADER_BYTES + payload.length);
      const decoded = decode(encoded, ctx);
      expect(decoded.kind).toBe(kind);
      expect(decoded.payload).toEqual(payload);
      expect(decoded.checksum).toBe(crc32c(payload));
    }
  });

  it('lays out the header as documented', () => {
    const encoded = encode(Uint8Array.of(1, 2, 3), 'state');
    const view = new DataView(encoded.buffer);
    expect(Array.from(encoded.subarray(0, 4))).toEqual([0x53, 0x4c, 0x43, 0x4b]); // "SLCK"
    expect(view.getUint16(4)).toBe(1);
    expect(view.getUint8(6)).toBe(2);
    expect(view.getUint8(7)).toBe(0);
    expect(view.getBigUint64(8)).toBe(3n);
    expect(view.getUint32(16)).toBe(crc32c(Uint8Array.of(1, 2, 3)));
    expect(view.getUint32(20)).toBe(crc32c(encoded.subarray(0, 20)));
    expect(Array.from(encoded.subarray(24))).toEqual([1, 2, 3]);
  });

  it('names the file and the checkpoint on a checksum mismatch', () => {
    const encoded = encode(seededBytes(100, 1), 'metadata');
    encoded[50]! ^= 0x01;
    const e = decodeError(encoded);
    expect(e.file).toBe('/x/chk-12/_metadata');
    expect(e.checkpointId).toBe(12);
    expect(e.message).toMatch(/^checkpoint 12: file \/x\/chk-12\/_metadata is corrupt \(checksum mismatch: expected [0-9a-f]{8}, found [0-9a-f]{8}\)$/);
  });

  it('detects every single damaged byte', () => {
    const clean = encode(seededBytes(40, 9), 'state');
    for (let i = 0; i < clean.length; i++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const damaged = Uint8Array.from(clean);
        damaged[i]! ^= mask;
        expect(() => decode(damaged, ctx), `byte ${i} ^ ${mask}`).toThrow(CorruptCheckpointError);
      }
    }
  });

  it('tells the kinds of damage apart', () => {
    const clean = encode(seededBytes(100, 2), 'state');
    const withHeader = (patch: (v: DataView) => void, fixHeaderChecksum = true): Uint8Array => {
      const b = Uint8Array.from(clean);
      const v = new DataView(b.buffer);
      patch(v);
      if (fixHeaderChecksum) v.setUint32(20, crc32c(b.subarray(0, 20)));
      return b;
    };
    expect(decodeError(clean.subarray(0, 10)).reason).toBe('truncated: 10 bytes, shorter than the 24-byte header');
    expect(decodeError(clean.subarray(0, 60)).reason).toBe('truncated: header declares 100 payload bytes, file has 36');
    const longer = new Uint8Array(clean.length + 3);
    longer.set(clean);
    expect(decodeError(longer).reason).toBe('3 trailing bytes after the 100-byte payload');
    expect(decodeError(withHeader((v) => v.setUint8(0, 0x50))).reason).toBe('bad magic: expected 534c434b, found 504c434b; not a Sluice checkpoint file');
    expect(decodeError(withHeader((v) => v.setUint16(4, 2))).reason).toBe('unknown format version 2: this Sluice reads version 1; the file was written by a newer Sluice');
    expect(decodeError(withHeader((v) => v.setBigUint64(8, 99n), false)).reason).toMatch(/^header checksum mismatch: expected [0-9a-f]{8}, found [0-9a-f]{8}$/);
    expect(decodeError(withHeader((v) => v.setUint8(6, 9))).reason).toBe('unknown file kind 9');
    expect(decodeError(withHeader((v) => v.setBigUint64(8, 2n ** 60n))).reason).toBe(`truncated: header declares ${2n ** 60n} payload bytes, file has 100`);
    expect(decodeError(clean, { ...ctx, expectedKind: 'metadata' }).reason).toBe('holds state, expected metadata');
  });

  it('says "snapshot" when the checkpoint id is not known yet', () => {
    const e = decodeError(new Uint8Array(3), { file: '/sp/savepoint-012345-abcdefabcdef/_metadata', checkpointId: undefined });
    expect(e.message).toBe('snapshot: file /sp/savepoint-012345-abcdefabcdef/_metadata is corrupt (truncated: 3 bytes, shorter than the 24-byte header)');
  });
});
