/** Display formats: sizes in bytes, durations in ms, rates per second, timestamps. */

export function bytes(n: number | undefined): string {
  if (n === undefined || n < 0) return '-';
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

export function duration(ms: number | undefined): string {
  if (ms === undefined || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

export function count(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '-';
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

export function rate(n: number | undefined): string {
  return n === undefined ? '-' : `${count(n)}/s`;
}

export function time(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || ms < 0) return '-';
  const d = new Date(ms);
  const p = (x: number, w = 2): string => String(x).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

export function percent(ratio: number): string {
  return `${Math.round(ratio * 100)}%`;
}

/** Time of day with milliseconds (the date is in `time`). */
export function clock(ms: number | undefined | null): string {
  const t = time(ms);
  return t === '-' ? t : t.slice(11);
}
