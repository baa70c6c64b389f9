/**
 * Sluice's fields of a job in GET /jobs/overview and /jobs/:id (Flink has none of them): its
 * restarts, the slots it waits for, its last failure. Absent from a server that predates them.
 */
export interface JobStatusFields {
  'num-restarts'?: unknown;
  'waiting-for-slots'?: unknown;
  'last-failure'?: unknown;
}

interface WaitingForSlots {
  required: number;
  available: number;
  'timeout-at': number;
}

interface LastFailure {
  timestamp: number;
  message: string;
}

/** How long the one-line cause of a failure may be in `sluice list` and `sluice info`. */
const CAUSE_CHARS_MAX = 160;

function isWaiting(w: unknown): w is WaitingForSlots {
  const o = w as Partial<WaitingForSlots> | null | undefined;
  return typeof o === 'object' && o !== null && typeof o.required === 'number' && typeof o.available === 'number' && typeof o['timeout-at'] === 'number';
}

function isFailure(f: unknown): f is LastFailure {
  const o = f as Partial<LastFailure> | null | undefined;
  return typeof o === 'object' && o !== null && typeof o.timestamp === 'number' && typeof o.message === 'string';
}

/** `17:05:10`, this machine's local time. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** A span for people: `4 min 50 s`, `12 s`. */
function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** `waiting for 2 slots, 1 available, gives up at 17:05:10 (in 4 min 50 s)`; undefined when it waits for none. */
export function waitingLine(w: unknown, nowMs: number): string | undefined {
  if (!isWaiting(w)) return undefined;
  const slots = (n: number): string => `${n} slot${n === 1 ? '' : 's'}`;
  return `waiting for ${slots(w.required)}, ${w.available} available, gives up at ${clockTime(w['timeout-at'])} (in ${span(w['timeout-at'] - nowMs)}; slot.request.timeout)`;
}

/** `2026-12-07T17:00:31.000Z: TaskManager tm-1 … was lost: …` (the cause cut to one short line); undefined when it never failed. */
export function failureLine(f: unknown): string | undefined {
  if (!isFailure(f)) return undefined;
  const cause = f.message.split('\n', 1)[0]!;
  return `${new Date(f.timestamp).toISOString()}: ${cause.length > CAUSE_CHARS_MAX ? `${cause.slice(0, CAUSE_CHARS_MAX - 1)}…` : cause}`;
}

/** The lines `sluice list` shows under a job's row: what it waits for, why it last failed. */
export function jobStatusLines(j: JobStatusFields, nowMs: number): string[] {
  const lines: string[] = [];
  const waiting = waitingLine(j['waiting-for-slots'], nowMs);
  if (waiting !== undefined) lines.push(waiting);
  const failure = failureLine(j['last-failure']);
  if (failure !== undefined) lines.push(`last failure ${failure}`);
  return lines;
}
