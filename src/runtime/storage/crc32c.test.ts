import { describe, expect, it } from 'vitest';
import { checksumHex, crc32c, crc32cImplementation, crc32cPortable } from './crc32c.js';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Bit-at-a-time reference, to check the sliced tables against. */
function crc32cBitwise(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return ~crc >>> 0;
}

describe('crc32c', () => {
  it('matches the published check value and RFC 3720 test vectors', () => {
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa); // 32 bytes of zeros
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43); // 32 bytes of ones
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e); // incrementing
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c); // decrementing
  });

  it('agrees with a bitwise implementation for every length around the 8-byte slices', () => {
    let seed = 12345;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
    for (let len = 0; len < 70; len++) {
      const b = Uint8Array.from({ length: len }, next);
      expect(crc32c(b)).toBe(crc32cBitwise(b));
    }
  });

  it('continues over chunks and formats as 8 hex digits', () => {
    const all = ascii('hello, checkpoint world');
    expect(crc32c(all.subarray(5), crc32c(all.subarray(0, 5)))).toBe(crc32c(all));
    expect(checksumHex(0x1a2b)).toBe('00001a2b');
  });
});

describe('crc32c implementations', () => {
  it('the native one is used where it loads, and agrees with the portable one', () => {
    expect(crc32cImplementation).toBe(process.env.SLUICE_CRC32C === 'portable' ? 'portable' : 'native');
    let seed = 99;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
    for (const len of [0, 1, 7, 8, 9, 63, 64, 65, 1000, 100_003]) {
      const b = Uint8Array.from({ length: len }, next);
      expect(crc32c(b)).toBe(crc32cPortable(b));
      expect(crc32c(b.subarray(len >> 1), crc32c(b.subarray(0, len >> 1)))).toBe(crc32cPortable(b));
    }
  });
});
