/**
 * A value as an error message shows it: JSON where it has one (else its string form: NaN and
 * Infinity, not JSON's null; bigints with their n), shortened to `maxChars` with '...'.
 */
export function previewValue(value: unknown, maxChars: number): string {
  let s: string;
  try {
    s = typeof value === 'number' ? String(value) : typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  return s.length > maxChars ? `${s.slice(0, maxChars - 3)}...` : s;
}
