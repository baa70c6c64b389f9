/**
 * Checks of the file connectors' constructor arguments: a bad value fails where the job is
 * built, naming the option, the value and the fix (it read nothing and finished, wrote into
 * the working directory, or failed later with a bare Node error).
 */

import { checkKnownOptions } from '../../util/known-options.js';

/**
 * The options object (absent: {}), with only `names` (see checkKnownOptions); a `format`
 * among them must be a function.
 */
export function checkFileOptions<O extends object>(what: string, options: O | undefined, names: Readonly<Record<string, true>>): O | Record<string, never> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new TypeError(`${what}: the options must be an object ({ ${Object.keys(names).join(', ')} }), got ${describeValue(options)}`);
  checkKnownOptions(what, options, names);
  const format = (options as { format?: unknown }).format;
  if (format !== undefined && typeof format !== 'function') throw new TypeError(`${what}: format must be a function (record) => line, got ${describeValue(format)}`);
  return options;
}

/** `path` when it is a non-empty string. `what`: 'file source', ...; `fix`: what to give instead. */
export function checkPath(what: string, path: unknown, fix: string): string {
  if (typeof path !== 'string') throw new TypeError(`${what}: the path must be a string, got ${describeValue(path)}; ${fix}`);
  // As Flink's Path, which refuses an empty string: '' resolved to the working directory.
  if (path === '') throw new Error(`${what}: the path is empty; ${fix} ('.' for the working directory)`);
  return path;
}

/** `value` when it is undefined or an integer in [min, max]; `meaning` says what the option is. */
export function checkWholeNumber(what: string, option: string, value: unknown, min: number, max: number, meaning: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new RangeError(`${what}: ${option} (${meaning}) must be an integer ${range}, got ${describeValue(value)}`);
  }
  return value;
}

function describeValue(v: unknown): string {
  if (typeof v === 'string') return `the string '${v}'`;
  if (v === null || typeof v !== 'object') return String(v);
  return Array.isArray(v) ? 'an array' : 'an object';
}
