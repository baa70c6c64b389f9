import { randomBytes } from 'node:crypto';

/** Randomness for file and directory names, injected so tests can make names reproducible. */
export type RandomBytes = (size: number) => Uint8Array;

export const cryptoRandomBytes: RandomBytes = (size) => randomBytes(size);

export function randomHex(random: RandomBytes, size: number): string {
  return Array.from(random(size), (x) => x.toString(16).padStart(2, '0')).join('');
}
