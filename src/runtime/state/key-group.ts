/**
 * Key groups: the unit in which keyed state is partitioned, snapshotted and redistributed.
 * The formulas are Flink's (KeyGroupRangeAssignment, MathUtils.murmurHash), and key hashes
 * follow Java's hashCode for the equivalent Java type, so a key lands in the same key group
 * as it would in a Flink job.
 */

/** Keys of keyed streams: primitive values with value equality. */
export type KeyType = string | number | bigint | boolean;

/** A key as an error message shows it: strings quoted (shortened), bigints with their n. */
export function describeKey(key: KeyType): string {
  return typeof key === 'string' ? `'${key.length > 40 ? `${key.slice(0, 37)}...` : key}'` : typeof key === 'bigint' ? `${key}n` : String(key);
}

export const DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 128;
export const UPPER_BOUND_MAX_PARALLELISM = 32768;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** Java String.hashCode over UTF-16 code units. */
export function stringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Java Long.hashCode of a 64-bit two's complement value given as high and low words. */
function longHash(hi: number, lo: number): number {
  return (hi ^ lo) | 0;
}

/**
 * Java hashCode of a key: Integer for 32-bit integers, Long for other safe integers and
 * bigints, Double for other numbers, Boolean, String.
 */
export function keyHashCode(key: KeyType): number {
  // Comparisons with `typeof` rather than a switch on it, which calls the Typeof builtin.
  if (typeof key === 'string') return stringHashCode(key);
  if (typeof key === 'number') {
    if ((key | 0) === key) return key; // Integer.hashCode (also covers -0 -> 0)
    if (Number.isSafeInteger(key)) {
      const lo = key % 0x1_0000_0000;
      const hi = Math.floor(key / 0x1_0000_0000);
      return longHash(hi | 0, lo | 0);
    }
    if (Number.isNaN(key)) return 0x7ff80000; // Double.doubleToLongBits(NaN) canonical
    f64[0] = key;
    return longHash(u32[1]! | 0, u32[0]! | 0);
  }
  if (typeof key === 'bigint') {
    const v = BigInt.asUintN(64, key);
    return longHash(Number(v >> 32n) | 0, Number(v & 0xffff_ffffn) | 0);
  }
  if (typeof key === 'boolean') return key ? 1231 : 1237;
  throw new TypeError(`a key must be a string, number, bigint or boolean, got ${typeof key}`);
}

function rotl(x: number, n: number): number {
  return (x << n) | (x >>> (32 - n));
}

/** Flink's MathUtils.murmurHash(int): a non-negative int. */
export function murmurHash(code: number): number {
  let h = Math.imul(code, 0xcc9e2d51);
  h = rotl(h, 15);
  h = Math.imul(h, 0x1b873593);
  h = rotl(h, 13);
  h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  h ^= 4;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  if (h >= 0) return h;
  if (h !== -0x80000000) return -h;
  return 0;
}

export function assignToKeyGroup(key: KeyType, maxParallelism: number): number {
  return murmurHash(keyHashCode(key)) % maxParallelism;
}

/** The subtask index that owns a key group. */
export function operatorIndexForKeyGroup(maxParallelism: number, parallelism: number, keyGroup: number): number {
  return Math.floor((keyGroup * parallelism) / maxParallelism);
}

/** Inclusive range of key groups. Empty when end < start. */
export interface KeyGroupRange {
  readonly startKeyGroup: number;
  readonly endKeyGroup: number;
}

export function keyGroupRangeForOperator(maxParallelism: number, parallelism: number, operatorIndex: number): KeyGroupRange {
  checkParallelism(parallelism, maxParallelism);
  if (operatorIndex < 0 || operatorIndex >= parallelism) throw new RangeError(`operator index ${operatorIndex} out of range [0, ${parallelism})`);
  const start = Math.floor((operatorIndex * maxParallelism + parallelism - 1) / parallelism);
  const end = Math.floor(((operatorIndex + 1) * maxParallelism - 1) / parallelism);
  return { startKeyGroup: start, endKeyGroup: end };
}

export function keyGroupRangeSize(r: KeyGroupRange): number {
  return Math.max(0, r.endKeyGroup - r.startKeyGroup + 1);
}

export function keyGroupRangeContains(r: KeyGroupRange, keyGroup: number): boolean {
  return keyGroup >= r.startKeyGroup && keyGroup <= r.endKeyGroup;
}

function roundUpToPowerOfTwo(x: number): number {
  let p = 1;
  while (p < x) p *= 2;
  return p;
}

/** Flink's KeyGroupRangeAssignment.computeDefaultMaxParallelism. */
export function computeDefaultMaxParallelism(parallelism: number): number {
  return Math.min(
    Math.max(roundUpToPowerOfTwo(parallelism + Math.floor(parallelism / 2)), DEFAULT_LOWER_BOUND_MAX_PARALLELISM),
    UPPER_BOUND_MAX_PARALLELISM,
  );
}

export function checkParallelism(parallelism: number, maxParallelism: number): void {
  if (!Number.isInteger(maxParallelism) || maxParallelism < 1 || maxParallelism > UPPER_BOUND_MAX_PARALLELISM) {
    throw new RangeError(`max parallelism must be an integer in [1, ${UPPER_BOUND_MAX_PARALLELISM}], got ${maxParallelism}`);
  }
  if (!Number.isInteger(parallelism) || parallelism < 1 || parallelism > maxParallelism) {
    throw new RangeError(`parallelism must be an integer in [1, max parallelism ${maxParallelism}], got ${parallelism}`);
  }
}

/** Of the records whose key group came with them (from the keyBy), one in this many is hashed again to check it. */
const KEY_GROUP_CHECK_INTERVAL = 64;

/**
 * Counts the records whose key group a backend was given (`setCurrentKeyInGroup`) and hashes
 * one key in KEY_GROUP_CHECK_INTERVAL again, and any whose group lies outside the range: a key
 * selector that gives a record another key on the receiving side than the keyBy's (a
 * non-deterministic one) fails the job as it would if every key were hashed, only later.
 */
export class KeyGroupHints {
  private count = 0;
  constructor(
    private readonly range: KeyGroupRange,
    private readonly maxParallelism: number,
  ) {}

  /** The key group's index in the range, checked when due. */
  slotOf(key: KeyType, keyGroup: number): number {
    const slot = keyGroup - this.range.startKeyGroup;
    if (++this.count === KEY_GROUP_CHECK_INTERVAL || slot < 0 || keyGroup > this.range.endKeyGroup) {
      this.count = 0;
      const own = ownedKeyGroup(key, this.range, this.maxParallelism);
      if (own !== keyGroup) {
        throw new Error(
          `key ${JSON.stringify(String(key))} belongs to key group ${own}, but the keyBy sent its record as key group ${keyGroup}: ` +
            'the key selector must return the same key for a record every time it is called (a non-deterministic key selector?)',
        );
      }
    }
    return slot;
  }
}

/**
 * The key group of a key this subtask owns; a key outside the range means the key selector
 * gave another key for the same record (a non-deterministic key selector).
 */
export function ownedKeyGroup(key: KeyType, range: KeyGroupRange, maxParallelism: number): number {
  const kg = assignToKeyGroup(key, maxParallelism);
  if (!keyGroupRangeContains(range, kg)) {
    throw new Error(
      `key ${JSON.stringify(String(key))} belongs to key group ${kg}, outside this subtask's range ` +
        `[${range.startKeyGroup}, ${range.endKeyGroup}]: the key selector must return the same key ` +
        'for a record every time it is called (a non-deterministic key selector?)',
    );
  }
  return kg;
}
