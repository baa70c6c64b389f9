import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Work directories that belong to one process (a JobManager's job bundles, a TaskManager's,
 * an lmdb backend's working copy): named after their owner, `<prefix><pid>-<start>-XXXXXX`,
 * where `<start>` is the process's start time in clock ticks since boot (`/proc/<pid>/stat`,
 * `x` where there is no /proc). A process removes its own when it stops; one killed (SIGKILL,
 * OOM killer, power cut) cannot, so the next process that makes a directory with the same
 * prefix in the same parent removes those whose owner is gone. A directory whose owner runs
 * is never touched: its pid is alive with the same start time (a pid reused by a newer
 * process has another start time, so the old directory goes). Directories named otherwise
 * (older Sluice versions, other tools) are left alone.
 */

/** The process that named a work directory. */
export interface WorkDirOwner {
  readonly pid: number;
  /** Undefined where the start time could not be read when the directory was made. */
  readonly startTicks: number | undefined;
}

/** What the system says of a pid now. */
export interface ProcessProbe {
  readonly alive: boolean;
  /** Undefined when unknown (no /proc, or the process is gone). */
  readonly startTicks: number | undefined;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The owner named by a work directory's name, or undefined when `name` is not one of `prefix`'s. Pure. */
export function workDirOwner(name: string, prefix: string): WorkDirOwner | undefined {
  const m = new RegExp(`^${escape(prefix)}([1-9][0-9]*)-([0-9]+|x)-[A-Za-z0-9]{6}$`).exec(name);
  if (m === null) return undefined;
  return { pid: Number(m[1]), startTicks: m[2] === 'x' ? undefined : Number(m[2]) };
}

/** Whether the owner of a directory is gone: its pid is not alive, or is alive as another process. Pure. */
export function ownerIsGone(owner: WorkDirOwner, now: ProcessProbe): boolean {
  if (!now.alive) return true;
  return owner.startTicks !== undefined && now.startTicks !== undefined && owner.startTicks !== now.startTicks;
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat); undefined without /proc. */
function startTicksOf(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count after its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  return Number.isSafeInteger(ticks) ? ticks : undefined;
}

/** Signal 0: ESRCH means no such process; EPERM means one of another user's. */
export function probeProcess(pid: number): ProcessProbe {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return { alive: false, startTicks: undefined };
  }
  return { alive: true, startTicks: startTicksOf(pid) };
}

/**
 * Removes the directories in `parent` named with `prefix` whose owner is gone; returns the
 * paths removed. One that cannot be removed (another user's) is skipped.
 */
export function removeDeadProcessWorkDirs(parent: string, prefix: string, probe: (pid: number) => ProcessProbe = probeProcess): string[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owner = workDirOwner(name, prefix);
    if (owner === undefined || owner.pid === process.pid || !ownerIsGone(owner, probe(owner.pid))) continue;
    try {
      rmSync(join(parent, name), { recursive: true, force: true });
      removed.push(join(parent, name));
    } catch {
      // another user's, or being removed by another process: not ours to insist on
    }
  }
  return removed;
}

let ownStartTicks: number | undefined | null = null;

/** Makes a new directory in `parent` named after this process (`<prefix><pid>-<start>-XXXXXX`). */
export function makeOwnedDir(parent: string, prefix: string): string {
  if (ownStartTicks === null) ownStartTicks = startTicksOf(process.pid);
  return mkdtempSync(join(parent, `${prefix}${process.pid}-${ownStartTicks ?? 'x'}-`));
}

/**
 * Removes what dead processes left under `parent` with `prefix` (see above), then makes this
 * process's work directory there. `removed`: the paths of the directories removed.
 */
export function makeProcessWorkDir(parent: string, prefix: string): { path: string; removed: string[] } {
  const removed = removeDeadProcessWorkDirs(parent, prefix);
  return { path: makeOwnedDir(parent, prefix), removed };
}
