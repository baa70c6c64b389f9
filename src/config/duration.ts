const units: Record<string, number> = {
  ms: 1, milli: 1, millis: 1, millisecond: 1, milliseconds: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  min: 60_000, m: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
};

/** Parses Flink-style durations: "10 min", "1s", "200 ms", "500" (milliseconds). */
export function parseDurationMs(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (m === null) throw new Error(`'${text}' is not a duration (examples: 500 ms, 10 s, 10 min, 1 h)`);
  const unit = (m[2] ?? '').toLowerCase();
  const factor = unit === '' ? 1 : units[unit];
  if (factor === undefined) throw new Error(`'${text}': unknown time unit '${m[2]}' (use ms, s, min, h or d)`);
  return Math.round(Number(m[1]) * factor);
}

/** Parses Flink-style memory sizes: "20 kb", "64mb", "1024" (bytes). */
export function parseBytes(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (m === null) throw new Error(`'${text}' is not a size (examples: 1024, 20 kb, 64 mb)`);
  const unit = (m[2] ?? '').toLowerCase();
  const table: Record<string, number> = { '': 1, b: 1, bytes: 1, k: 1024, kb: 1024, kib: 1024, m: 1 << 20, mb: 1 << 20, mib: 1 << 20, g: 1 << 30, gb: 1 << 30, gib: 1 << 30 };
  const factor = table[unit];
  if (factor === undefined) throw new Error(`'${text}': unknown size unit '${m[2]}' (use b, kb, mb or gb)`);
  return Math.round(Number(m[1]) * factor);
}
