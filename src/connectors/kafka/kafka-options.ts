/**
 * Checks of the Kafka connectors' options, made when a source, sink or client is constructed
 * (as Kafka's Java clients reject bad config at construction): a bad value fails there with one
 * message naming the option, the value and what is accepted, instead of hanging (a string
 * where milliseconds belong made a deadline that never passes), silently meaning something
 * else (an unknown isolation level read uncommitted records) or failing later in every restart.
 */

import { didYouMean } from '../../util/known-options.js';
import type { KafkaConnectionOptions } from './kafka-types.js';

export { didYouMean };

/** The option names every Kafka connector takes (see checkKnownOptions). */
export const CONNECTION_OPTION_NAMES = {
  bootstrapServers: true,
  clientId: true,
  requestTimeoutMs: true,
  retryTimeoutMs: true,
  log: true,
} as const satisfies Record<keyof KafkaConnectionOptions, true>;

/** The largest value of a Kafka protocol INT32 field (timeouts and sizes sent to the broker). */
export const INT32_MAX = 2_147_483_647;

/** A value as an error message shows it: strings quoted, objects as JSON (shortened). */
export function describeValue(v: unknown): string {
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'function') return 'a function';
  if (v === null || typeof v !== 'object') return String(v);
  if (v instanceof RegExp) return String(v);
  if (v instanceof Date) return `a Date (${Number.isNaN(v.getTime()) ? 'invalid' : v.toISOString()})`;
  let s: string | undefined;
  try {
    s = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : typeof x === 'function' ? '<function>' : x));
  } catch {
    s = undefined;
  }
  if (s === undefined) return Object.prototype.toString.call(v);
  return s.length > 120 ? `${s.slice(0, 120)}…` : s;
}

/** The quoted names joined as "'a', 'b' or 'c'". */
export function listOf(names: readonly string[]): string {
  const quoted = names.map((n) => `'${n}'`);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

/** What a numeric option accepts. */
export interface NumberRule {
  readonly min: number;
  readonly max?: number;
  readonly integer?: boolean;
  /** e.g. 'milliseconds', 'records', 'bytes'. */
  readonly unit?: string;
  /** What a special value means, e.g. '0: off'. */
  readonly note?: string;
}

/** An absent (undefined) option passes; anything else must be a number the rule accepts. */
export function checkNumberOption(owner: string, name: string, value: unknown, rule: NumberRule): void {
  if (value === undefined) return;
  const integer = rule.integer === true;
  if (typeof value === 'number' && Number.isFinite(value) && value >= rule.min && value <= (rule.max ?? Infinity) && (!integer || Number.isInteger(value))) return;
  const kind = `${integer ? 'an integer number' : 'a finite number'}${rule.unit === undefined ? '' : ` of ${rule.unit}`}`;
  const range = rule.max === undefined ? `>= ${rule.min}` : `in [${rule.min}, ${rule.max}]`;
  const why = typeof value === 'string' ? ` (a string; give a number${rule.unit === undefined ? '' : ` of ${rule.unit}`})` : '';
  throw new Error(`${owner}: ${name} must be ${kind} ${range}${rule.note === undefined ? '' : ` (${rule.note})`}, got ${describeValue(value)}${why}`);
}

/** An absent option passes; anything else must be one of the `valid` strings. */
export function checkOneOf(owner: string, name: string, value: unknown, valid: readonly string[], meaning = ''): void {
  if (value === undefined || (typeof value === 'string' && valid.includes(value))) return;
  throw new Error(`${owner}: ${name} must be ${listOf(valid)}${meaning}, got ${describeValue(value)}${didYouMean(value, valid)}`);
}

export function checkFunctionOption(owner: string, name: string, value: unknown, shape: string): void {
  if (value === undefined || typeof value === 'function') return;
  throw new Error(`${owner}: ${name} must be a function ${shape}, got ${describeValue(value)}`);
}

export function checkBooleanOption(owner: string, name: string, value: unknown): void {
  if (value === undefined || typeof value === 'boolean') return;
  throw new Error(`${owner}: ${name} must be true or false, got ${describeValue(value)}`);
}

export function checkStringOption(owner: string, name: string, value: unknown, what: string, allowEmpty = false): void {
  if (value === undefined || (typeof value === 'string' && (allowEmpty || value.length > 0))) return;
  throw new Error(`${owner}: ${name} must be ${allowEmpty ? 'a string' : 'a non-empty string'} (${what}), got ${describeValue(value)}`);
}

/** A dead-letter output option: `{ topic }` or a function. */
export function checkDeadLetterOption(owner: string, value: unknown, fnShape: string): void {
  if (value === undefined || typeof value === 'function') return;
  const topic = value !== null && typeof value === 'object' ? (value as { topic?: unknown }).topic : undefined;
  if (typeof topic === 'string' && topic.length > 0) return;
  throw new Error(`${owner}: deadLetter must be { topic: '<dead-letter topic>' } or a function ${fnShape}, got ${describeValue(value)}`);
}

/** The options object itself (a constructor called without one failed with "Cannot read properties of undefined"). */
export function checkOptionsObject(owner: string, options: unknown): void {
  if (options === null || typeof options !== 'object') throw new Error(`${owner}: the options must be an object ({ bootstrapServers, ... }), got ${describeValue(options)}`);
}

/**
 * The connection options shared by the source, the sink and the client (bootstrapServers is
 * checked by parseBootstrap). requestTimeoutMs is sent to brokers as a 32-bit integer (the
 * produce timeout); retryTimeoutMs is a local deadline (0: no retries).
 */
export function checkConnectionOptions(owner: string, o: { readonly clientId?: unknown; readonly requestTimeoutMs?: unknown; readonly retryTimeoutMs?: unknown; readonly log?: unknown }): void {
  checkStringOption(owner, 'clientId', o.clientId, "Kafka's client.id", true);
  checkNumberOption(owner, 'requestTimeoutMs', o.requestTimeoutMs, { min: 1, max: INT32_MAX, integer: true, unit: 'milliseconds' });
  checkNumberOption(owner, 'retryTimeoutMs', o.retryTimeoutMs, { min: 0, unit: 'milliseconds', note: '0: no retries' });
  checkFunctionOption(owner, 'log', o.log, '(message: string) => void');
}
