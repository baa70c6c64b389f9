import { tmpdir } from 'node:os';
import { toLogger } from '../util/logger.js';
import { makeProcessWorkDir } from '../util/process-work-dir.js';

/**
 * A JobManager's or TaskManager's work directory in the OS temp directory (job bundles),
 * after removing those that killed JobManagers or TaskManagers left there (see
 * process-work-dir.ts: never one whose process still runs). What it removed goes to this
 * process's log, not to the log target of one JobManager or TaskManager (a process may hold
 * several, and the directories were none of theirs).
 */
export function makeWorkDir(prefix: 'sluice-jm-' | 'sluice-tm-', what: 'JobManager' | 'TaskManager'): string {
  const { path, removed } = makeProcessWorkDir(tmpdir(), prefix);
  // At debug level: a process's output stays what it says about its own work (a command's
  // error, a job's lines), whatever earlier processes left in the shared temp directory.
  if (removed.length > 0) toLogger(undefined, what === 'JobManager' ? 'jobmanager' : 'taskmanager').debug(`removed ${removed.length} work director${removed.length === 1 ? 'y' : 'ies'} that ${what} processes no longer running left: ${removed.join(', ')}`);
  return path;
}
