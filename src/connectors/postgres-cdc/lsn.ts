/**
 * PostgreSQL log sequence numbers (LSN): a 64-bit position in the write-ahead log, written
 * `X/Y` (two hexadecimal 32-bit halves, as `pg_current_wal_lsn()` shows it). Kept as bigint
 * in the source and as the `X/Y` string in checkpoints and records (plain data).
 */

const LSN_PATTERN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** `16/B374D848` -> bigint; throws naming `what` for anything else. */
export function parseLsn(text: string, what = 'LSN'): bigint {
  const m = LSN_PATTERN.exec(text);
  if (m === null) throw new Error(`${what} must be a PostgreSQL LSN like '16/B374D848' (two hexadecimal halves, as pg_current_wal_lsn() shows it), got ${JSON.stringify(text)}`);
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

/** bigint -> `16/B374D848` (upper case, as PostgreSQL writes it). */
export function formatLsn(lsn: bigint): string {
  if (lsn < 0n || lsn > 0xffff_ffff_ffff_ffffn) throw new RangeError(`LSN out of range: ${lsn}`);
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffff_ffffn).toString(16).toUpperCase()}`;
}

export function isLsn(text: unknown): text is string {
  return typeof text === 'string' && LSN_PATTERN.test(text);
}
