import { checkStateMapping, StateMappingError } from '../runtime/checkpoint/state-persistence.js';
import { openSnapshotSource } from '../runtime/storage/s3-checkpoint-storage.js';
import { CliError } from './cli-error.js';
import { stopWithSavepoint, triggerCheckpoint } from './job-commands.js';
import { prepareJob } from './job-loader.js';
import { parseTarget, rest, type RestTarget } from './rest-client.js';
import { buildJobGraph, parseRunArgs, RUN_OPTIONS_WITH_VALUE, submitPrepared, unlessStalled } from './run-command.js';

export const UPGRADE_USAGE =
  'usage: sluice upgrade [--jobmanager host:port] [--savepoint-path dir] [--type canonical|native] [--skip-state-check] [-p N] [-D key=value]... [--allow-non-restored-state] [--no-typecheck] <jobId> <job.ts> [job args...]';

/** Options of `sluice upgrade` itself (the others are `sluice run`'s). */
const UPGRADE_OPTIONS_WITH_VALUE = new Set(['--savepoint-path', '--savepointPath', '--type']);

interface UpgradeArgs {
  readonly jobId: string;
  readonly savepointDir: string | undefined;
  readonly formatType: 'CANONICAL' | 'NATIVE';
  readonly checkState: boolean;
  /** What `sluice run -d` takes: the new job, its options and arguments. */
  readonly runArgv: readonly string[];
}

/** Splits `sluice upgrade`'s command line: its own options, the running job's id (the first word that is not an option), `sluice run`'s. */
export function parseUpgradeArgs(argv: readonly string[]): UpgradeArgs {
  const runArgv: string[] = [];
  let jobId: string | undefined;
  let savepointDir: string | undefined;
  let formatType: 'CANONICAL' | 'NATIVE' = 'CANONICAL';
  let checkState = true;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (jobId !== undefined && !a.startsWith('-')) {
      runArgv.push(...argv.slice(i)); // the job file and its arguments
      break;
    }
    if (a === '--help' || a === '-h') throw new CliError(UPGRADE_USAGE, 0);
    if (UPGRADE_OPTIONS_WITH_VALUE.has(a)) {
      const v = argv[++i];
      if (v === undefined) throw new CliError(`${a} needs a value\n${UPGRADE_USAGE}`, 2);
      if (a === '--type') {
        const t = v.toUpperCase();
        if (t !== 'CANONICAL' && t !== 'NATIVE') throw new CliError(`--type must be canonical or native\n${UPGRADE_USAGE}`, 2);
        formatType = t;
      } else savepointDir = v;
    } else if (a === '--skip-state-check') checkState = false;
    else if (a === '-d' || a === '--detached') continue; // always detached
    else if (RUN_OPTIONS_WITH_VALUE.has(a)) {
      if (a === '-s' || a === '--fromSavepoint' || a === '--from-savepoint' || a === '--resume') {
        throw new CliError(`${a}: the new job starts from the savepoint the running job stops with\n${UPGRADE_USAGE}`, 2);
      }
      runArgv.push(a, argv[++i] ?? '');
    } else if (a.startsWith('-')) runArgv.push(a);
    else if (/^[0-9a-f]{32}$/.test(a)) jobId = a;
    else throw new CliError(`'${a}' is not a job id (32 hex characters; see sluice list)\n${UPGRADE_USAGE}`, 2);
  }
  if (jobId === undefined) throw new CliError(`the id of the running job is missing (see sluice list)\n${UPGRADE_USAGE}`, 2);
  if (!runArgv.some((a, i) => !a.startsWith('-') && !RUN_OPTIONS_WITH_VALUE.has(runArgv[i - 1] ?? ''))) {
    throw new CliError(`the new job's module is missing\n${UPGRADE_USAGE}`, 2);
  }
  return { jobId, savepointDir, formatType, checkState, runArgv: ['-d', ...runArgv] };
}

/** How often the newest checkpoint is read again when the one read was subsumed meanwhile. */
const SUBSUMED_RETRIES = 5;

function unreadableCheckpoint(path: string, e: unknown): CliError {
  return new CliError(
    `cannot read the running job's newest checkpoint ${path} from here to check the new job against it: ${(e as Error).message}; nothing was stopped. ` +
      'Run the upgrade where the checkpoint directory is reachable (with the same s3.* settings), or give --skip-state-check',
  );
}

/** The newest completed checkpoint of a running job, as GET /jobs/:id/checkpoints reports it (Flink's `latest.completed`). */
async function latestCheckpointPath(target: RestTarget, jobId: string): Promise<string | undefined> {
  const stats = await rest<{ latest?: { completed?: { external_path?: string } | null } }>(target, 'GET', `/jobs/${jobId}/checkpoints`);
  return stats.latest?.completed?.external_path ?? undefined;
}

/**
 * `sluice upgrade <jobId> job.ts`: replaces a running job by a new version without losing its
 * state, as the Flink Kubernetes Operator's `savepoint` upgrade mode does: checks that the new
 * job can take the running job's state (operator uids, max parallelism, source kinds; from the
 * newest checkpoint's metadata, before anything stops), stops the job with a savepoint, and
 * submits the new job from it. Nothing is stopped when the check fails; when the new job
 * cannot be submitted after the stop, the savepoint's path and the command to go on are printed.
 */
export async function upgradeCommand(argv: readonly string[]): Promise<number> {
  const u = parseUpgradeArgs(argv);
  const args = parseRunArgs(u.runArgv);
  const target = parseTarget([...(args.jobManager === undefined ? [] : ['--jobmanager', args.jobManager]), ...(args.token === undefined ? [] : ['--token', args.token])]);
  const job = await rest<{ state?: string; name?: string }>(target, 'GET', `/jobs/${u.jobId}`);
  if (job.state !== 'RUNNING') throw new CliError(`job ${u.jobId} is ${job.state ?? 'in an unknown state'}, not RUNNING: there is nothing to upgrade (start the new job with sluice run -s <savepoint>)`);

  const prepared = await unlessStalled(prepareJob(args.jobPath, { typeCheck: args.typeCheck }), args.jobPath);
  const { graph } = await buildJobGraph(args, prepared.definition);

  if (u.checkState) {
    let path = await latestCheckpointPath(target, u.jobId);
    if (path === undefined) {
      await triggerCheckpoint(target, u.jobId, false);
      path = await latestCheckpointPath(target, u.jobId);
    }
    if (path === undefined) throw new CliError(`job ${u.jobId} has no completed checkpoint to check the new job against; nothing was stopped (--skip-state-check skips the check)`);
    let metadata;
    for (let attempt = 1; ; attempt++) {
      try {
        metadata = (await openSnapshotSource(path, args.config)).metadata;
        break;
      } catch (e) {
        // A newer checkpoint may have subsumed (deleted) this one meanwhile: read the newest again.
        const newer = await latestCheckpointPath(target, u.jobId);
        if (newer !== undefined && newer !== path && attempt < SUBSUMED_RETRIES) {
          path = newer;
          continue;
        }
        throw unreadableCheckpoint(path, e);
      }
    }
    try {
      checkStateMapping(metadata, graph, { allowNonRestoredState: args.allowNonRestoredState });
    } catch (e) {
      if (e instanceof StateMappingError) throw new CliError(`${args.jobPath} cannot take the state of job ${u.jobId}: ${e.message}. Job ${u.jobId} was not stopped`);
      throw e;
    }
    process.stderr.write(`${args.jobPath} can take the state of job ${u.jobId} (checked against ${path})\n`);
  }

  // Where the savepoint goes: --savepoint-path, else the savepoint directory given for the new
  // job (-D execution.checkpointing.savepoint-dir), else the running job's own default.
  const dir = u.savepointDir ?? args.config.getString('execution.checkpointing.savepoint-dir');
  const savepoint = await stopWithSavepoint(target, u.jobId, { drain: false, formatType: u.formatType, ...(dir === undefined ? {} : { dir }) });
  process.stderr.write(`Job ${u.jobId} stopped with savepoint ${savepoint}\n`);
  try {
    return await submitPrepared({ ...args, restorePath: savepoint }, prepared);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new CliError(
      `job ${u.jobId} stopped with savepoint ${savepoint}, but the new job was not started: ${message}\n` +
        `start it with: sluice run -d -s ${savepoint} ${u.runArgv.slice(1).join(' ')} (or the old job's module, to go back)`,
    );
  }
}
