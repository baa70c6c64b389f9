import { describeKey, type KeyType } from '../state/key-group.js';

/**
 * The two inputs of a keyed two-input operation (connect(...).keyBy(k1, k2), an interval join,
 * a window join or coGroup) meet only on keys equal in type and value: 1 and '1' are two keys
 * in two key groups, so a join of records whose ids were parsed differently on each side
 * would match nothing, without a word. This compares the type of the first key each input
 * gives and, once both have given one and they agree, costs one comparison per record.
 */
export class KeyTypeAgreement {
  private first: [KeyType | undefined, KeyType | undefined] | null = [undefined, undefined];

  constructor(
    /** What the keys belong to, for the error: "interval join 'X'", "connect(...).keyBy of 'Y'". */
    private readonly what: string,
  ) {}

  /** Records `key` from input 0 or 1; throws when the other input's first key had another type. */
  check(input: 0 | 1, key: KeyType): void {
    const first = this.first;
    if (first === null || first[input] !== undefined) return;
    first[input] = key;
    const other = first[1 - input];
    if (other === undefined) return;
    if (typeof other !== typeof key) {
      const [a, b] = first as [KeyType, KeyType];
      throw new Error(
        `${this.what}: the first input's keys are ${kindOf(a)} (e.g. ${describeKey(a)}) and the second input's are ${kindOf(b)} (e.g. ${describeKey(b)}); ` +
          `keys only meet when equal in type and value (1 and '1' are different keys), so nothing would match: make both key selectors return the same type (e.g. String(r.id) on both sides)`,
      );
    }
    this.first = null;
  }
}

function kindOf(key: KeyType): string {
  return `${typeof key}s`;
}
