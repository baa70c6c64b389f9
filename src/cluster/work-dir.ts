import { tmpdir } from 'node:os';
import type { Logger } from '../util/logger.js';
import { makeProcessWorkDir } from '../util/process-work-dir.js';

/**
 * A JobManager's or TaskManager's work directory in the OS temp directory (job bundles),
 * after removing those that killed JobManagers or TaskManagers left there (see
 * process-work-dir.ts: never one whose process still runs).
 */
export function makeWorkDir(prefix: 'sluice-jm-' | 'sluice-tm-', what: 'JobManager' | 'TaskManager', log: Logger): string {
  const { path, removed } = makeProcessWorkDir(tmpdir(), prefix);
  if (removed.length > 0) log.info(`removed ${removed.length} work director${removed.length === 1 ? 'y' : 'ies'} that ${what} processes no longer running left: ${removed.join(', ')}`);
  return path;
}
