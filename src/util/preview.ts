/**
 * A value as an error message shows it: JSON where it has one (else its string form),
 * shortened to `maxChars` with '...'.
 */
export function previewValue(value: unknown, maxChars: number): string {
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > maxChars ? `${s.slice(0, maxChars - 3)}...` : s;
}
