import { parseBytes, parseDurationMs } from './duration.js';
import { MAX_DURATION_MS, OPTIONS, OPTIONS_BY_KEY, type ConfigOption } from './options.js';
import { editDistance } from '../util/known-options.js';
import { previewValue } from '../util/preview.js';
import { normalizeStorageUri } from './storage-uri.js';

export type ConfigValue = number | boolean | string;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** A restart cannot fix a configuration: a job failing with this fails at once (runtime/recovery/non-recoverable-error.ts). */
  readonly throwableType = 'NonRecoverableError';
}

export function closestKey(key: string): string {
  let best = OPTIONS[0]!.key;
  let bestD = Number.POSITIVE_INFINITY;
  for (const o of OPTIONS) {
    const d = editDistance(key, o.key);
    if (d < bestD) {
      bestD = d;
      best = o.key;
    }
  }
  return best;
}

/** The option of a dotted key, or a ConfigError naming the closest known key. */
function optionFor(key: string): ConfigOption {
  const o = OPTIONS_BY_KEY.get(key);
  if (o === undefined) {
    throw new ConfigError(`unknown configuration key '${key}'; did you mean '${closestKey(key)}'? (see docs/configuration.md)`);
  }
  return o;
}

function parseValue(o: ConfigOption, raw: ConfigValue): ConfigValue {
  const bad = (why: string): never => {
    throw new ConfigError(`invalid value ${previewValue(raw, 200)} for '${o.key}': ${why}`);
  };
  const spec = o.spec;
  switch (spec.type) {
    case 'int': {
      const n = typeof raw === 'number' ? raw : /^\s*-?\d+\s*$/.test(String(raw)) ? Number(raw) : NaN;
      if (!Number.isInteger(n)) return bad('expected an integer');
      if (spec.min !== undefined && n < spec.min) return bad(`must be >= ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) return bad(`must be <= ${spec.max}`);
      return n;
    }
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(raw);
      if (!Number.isFinite(n)) return bad('expected a number');
      if (spec.min !== undefined && n < spec.min) return bad(`must be >= ${spec.min}`);
      return n;
    }
    case 'duration': {
      let ms: number;
      if (typeof raw === 'number') ms = Number.isFinite(raw) && raw >= 0 ? raw : bad('must be a number of milliseconds >= 0');
      else {
        try {
          ms = parseDurationMs(String(raw));
        } catch (e) {
          return bad((e as Error).message);
        }
      }
      if (spec.min !== undefined && ms < spec.min) return bad(`must be at least ${spec.min} ms`);
      const max = spec.max ?? MAX_DURATION_MS;
      if (ms > max) return bad(`must be at most ${max} ms${max === MAX_DURATION_MS ? ' (24.8 days, the longest timer Node.js has)' : ''}`);
      return ms;
    }
    case 'bytes': {
      if (typeof raw === 'number') return raw >= 0 ? raw : bad('must be >= 0');
      try {
        return parseBytes(String(raw));
      } catch (e) {
        return bad((e as Error).message);
      }
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const s = String(raw).toLowerCase();
      if (s === 'true') return true;
      if (s === 'false') return false;
      return bad('expected true or false');
    }
    case 'string':
      return String(raw);
    case 'storage-directory':
      try {
        return normalizeStorageUri(String(raw));
      } catch (e) {
        return bad((e as Error).message);
      }
    case 'enum': {
      const s = String(raw);
      const hit = spec.values.find((v) => v.toLowerCase() === s.toLowerCase());
      const refused = spec.refused?.[s.toLowerCase()];
      if (hit === undefined && refused !== undefined) return bad(refused);
      return hit ?? bad(`expected one of ${spec.values.join(', ')}`);
    }
  }
}

/** Job and cluster configuration: validated on every set. */
export class Configuration {
  private readonly values = new Map<string, ConfigValue>();

  constructor(entries: Iterable<readonly [string, ConfigValue]> = []) {
    for (const [k, v] of entries) this.set(k, v);
  }

  set(key: string, value: ConfigValue): this {
    const o = optionFor(key);
    this.values.set(o.key, parseValue(o, value));
    return this;
  }

  /** Parses `key=value` as given to `-D`. */
  setFromString(assignment: string): this {
    const i = assignment.indexOf('=');
    if (i <= 0) throw new ConfigError(`'-D ${assignment}' is not key=value (example: -D parallelism.default=2)`);
    return this.set(assignment.slice(0, i).trim(), assignment.slice(i + 1).trim());
  }

  has(key: string): boolean {
    optionFor(key);
    return this.values.has(key);
  }

  get(key: string): ConfigValue | undefined {
    const o = optionFor(key);
    return this.values.get(key) ?? o.defaultValue;
  }

  getNumber(key: string): number {
    const v = this.get(key);
    if (typeof v !== 'number') throw new ConfigError(`'${key}' has no numeric value`);
    return v;
  }

  getOptionalNumber(key: string): number | undefined {
    const v = this.get(key);
    return typeof v === 'number' ? v : undefined;
  }

  getBoolean(key: string): boolean {
    return this.get(key) === true;
  }

  getString(key: string): string | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : String(v);
  }

  merged(other: Configuration): Configuration {
    const c = new Configuration();
    for (const [k, v] of this.values) c.values.set(k, v);
    for (const [k, v] of other.values) c.values.set(k, v);
    return c;
  }

  entries(): [string, ConfigValue][] {
    return [...this.values];
  }
}

/** Parts of a key that mark its value as a secret (as Flink's GlobalConfiguration.isSensitive). */
const SENSITIVE_KEY_PARTS = ['password', 'secret', 'token', 'apikey', 'api-key', 'auth-params', 'jaas.config', 'basic-auth', 'http-headers'];

/** Whether a key's value must not be shown (REST, logs): Flink's rule, by the key's name. */
export function isSensitiveKey(key: string): boolean {
  const k = key.toLowerCase();
  return SENSITIVE_KEY_PARTS.some((part) => k.includes(part));
}

/** What Flink shows instead of a secret. */
export const HIDDEN_VALUE = '******';
