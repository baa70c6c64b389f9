/**
 * The line a job logs when it restarts after a failure. A job that fails the same way again
 * and again (a database it cannot reach, a record it cannot write) printed the whole failure
 * each time, and the restart strategy's internals after it; now the cause is printed in full
 * the first time, and after that only how often and since when it came back:
 *
 *   <cause>; restarting in 1 s (restart 1)
 *   failed again with the same cause (2 times since 17:02:10); restarting in 1.5 s (restart 2)
 *
 * "The same cause" is the same message with numbers and hexadecimal ids left out (a checkpoint
 * id, a subtask index, a TaskManager's id change from one failure to the next). A pure
 * formatter: time comes in as an argument.
 */
export interface RestartNotice {
  /** The failure's message. */
  readonly cause: string;
  /** When it failed, epoch milliseconds (wall clock: shown as a time of day). */
  readonly atMs: number;
  /** The restart this failure leads to, counting from 1 for the job. */
  readonly restart: number;
  /** How many restarts the strategy allows in all, when that is a fixed number. */
  readonly restartsMax: number | undefined;
  readonly delayMs: number;
}

export class RestartMessages {
  private repeated: { readonly key: string; readonly firstMs: number; count: number } | undefined;

  /** The line for this restart, and whether it repeats the cause of the one before (which said it in full); remembers the cause. */
  line(n: RestartNotice): { readonly text: string; readonly repeated: boolean } {
    const key = causeKey(n.cause);
    const after = `restarting in ${formatDelay(n.delayMs)} (restart ${n.restart}${n.restartsMax === undefined ? '' : ` of ${n.restartsMax}`})`;
    const r = this.repeated;
    if (r === undefined || r.key !== key) {
      this.repeated = { key, firstMs: n.atMs, count: 1 };
      return { text: `${n.cause}; ${after}`, repeated: false };
    }
    r.count++;
    return { text: `failed again with the same cause (${r.count} times since ${formatSince(r.firstMs, n.atMs)}); ${after}`, repeated: true };
  }
}

/** A message without the parts that differ between repetitions of one failure. */
export function causeKey(message: string): string {
  return message.replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, '#').replace(/\d+/g, '#');
}

/** `250 ms`, `1.5 s`, `12 s`, `2 min 5 s`. */
export function formatDelay(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 10_000) return `${Number((ms / 1000).toFixed(1))} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  return s % 60 === 0 ? `${min} min` : `${min} min ${s % 60} s`;
}

/** The time of day of `firstMs` (local time), with its date when it is a day or more before `nowMs`. */
function formatSince(firstMs: number, nowMs: number): string {
  const d = new Date(firstMs);
  const pad = (x: number): string => String(x).padStart(2, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (nowMs - firstMs < 24 * 3600_000) return time;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}
