/**
 * Names a user got slightly wrong: option names of connectors (a misspelt one was ignored
 * without a word, its default used instead) and option values, with the closest valid name.
 */

/** Levenshtein distance: insertions, deletions and substitutions of one character. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** ` (did you mean 'x'?)` when a string is one of `valid` but for case, '-' / '_' / spaces or a letter or two. */
export function didYouMean(value: unknown, valid: readonly string[]): string {
  if (typeof value !== 'string' || value.length === 0) return '';
  const norm = (s: string): string => s.toLowerCase().replace(/[-_\s.]/g, '');
  const v = norm(value);
  const close = valid.find((c) => norm(c) === v) ?? valid.find((c) => editDistance(norm(c), v) <= 2 && v.length >= 4);
  return close === undefined ? '' : ` (did you mean '${close}'?)`;
}

/**
 * Refuses option names that `known` does not list (its keys: the option names of the
 * owner's options interface, spelt out with `satisfies Record<keyof Options, true>` so the
 * compiler keeps the two in step). TypeScript flags an unknown name in an object literal, but
 * not in an object built elsewhere or in a JavaScript job, where a misspelt `groupID` or
 * `bootstrapServer` meant the default without a word.
 */
export function checkKnownOptions(owner: string, options: object, known: Readonly<Record<string, true>>): void {
  for (const name of Object.keys(options)) {
    if (Object.prototype.hasOwnProperty.call(known, name)) continue;
    const names = Object.keys(known);
    throw new Error(`${owner}: unknown option '${name}'${didYouMean(name, names)}; its options are ${names.join(', ')}`);
  }
}
