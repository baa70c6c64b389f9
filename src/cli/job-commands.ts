import type { CheckpointStatsEntry } from '../runtime/checkpoint/checkpoint-stats.js';
import { checkpointTable } from './checkpoint-table.js';
import { CliError } from './cli-error.js';
import { parseTarget, pathForServer, rejectUnknownOptions, requireJobId, rest, shapeProblem, unexpectedAnswer, type ResponseShape, type RestTarget } from './rest-client.js';
import { WaitProgress } from './wait-progress.js';
import { jobStatusLines, type JobStatusFields } from './job-status-lines.js';

export const LIST_USAGE = 'usage: sluice list [--jobmanager host:port]';
/** The answer to a triggered asynchronous operation (savepoint, stop, checkpoint). */
const TRIGGERED: ResponseShape = { 'request-id': 'string' };
/** The result of a completed savepoint (also of a stop or a cancel with savepoint), and of a checkpoint. */
const SAVEPOINT_DONE: ResponseShape = { location: 'string' };
const CHECKPOINT_DONE: ResponseShape = { checkpointId: 'number' };

export const CANCEL_USAGE = 'usage: sluice cancel [--jobmanager host:port] [--with-savepoint [dir]] <jobId>';
export const CHECKPOINT_USAGE = 'usage: sluice checkpoint [--jobmanager host:port] [--full] <jobId>';
export const CHECKPOINTS_USAGE = 'usage: sluice checkpoints [--jobmanager host:port] <jobId>';

interface JobOverview extends JobStatusFields {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  duration: number;
}

/** The fields of a job in GET /jobs/overview that the table shows. */
const JOB_OVERVIEW: ResponseShape = { jid: 'string', name: 'string', state: 'string', 'start-time': 'number', duration: 'number' };

/** `sluice list`: the jobs of a JobManager as a table. */
export async function listCommand(argv: string[]): Promise<number> {
  const target = parseTarget(argv);
  rejectUnknownOptions(argv, LIST_USAGE);
  const { jobs } = await rest<{ jobs: JobOverview[] }>(target, 'GET', '/jobs/overview', undefined, { jobs: [JOB_OVERVIEW] });
  if (jobs.length === 0) {
    process.stdout.write('No jobs.\n');
    return 0;
  }
  // Restarts, the slots a job waits for and its last failure are Sluice's fields: '-' from a server without them.
  const rows = [
    ['job id', 'state', 'restarts', 'started', 'duration', 'name'],
    ...jobs.map((j) => [j.jid, j.state, typeof j['num-restarts'] === 'number' ? String(j['num-restarts']) : '-', new Date(j['start-time']).toISOString(), `${Math.round(j.duration / 1000)} s`, j.name]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: readonly string[]): string => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd();
  const out = [line(rows[0]!)];
  jobs.forEach((j, k) => {
    out.push(line(rows[k + 1]!));
    // Under its row, indented: what the job waits for, and why it last failed.
    for (const l of jobStatusLines(j, Date.now())) out.push(`  ${l}`);
  });
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}

export async function cancelCommand(argv: string[]): Promise<number> {
  const target = parseTarget(argv);
  const w = argv.findIndex((a) => a === '--with-savepoint' || a === '-s');
  if (w >= 0) {
    // Deprecated in Flink in favour of stop, kept for habits: savepoint, then cancel.
    argv.splice(w, 1);
    rejectUnknownOptions(argv, CANCEL_USAGE);
    const positional = argv.filter((a) => !a.startsWith('-'));
    // The job id is the 32-hex argument; the other one, if any, is the directory (either order).
    const jobArg = positional.find((a) => /^[0-9a-f]{32}$/.test(a));
    const id = requireJobId(jobArg === undefined ? positional : [jobArg], CANCEL_USAGE);
    const others = positional.filter((a) => a !== jobArg);
    if (others.length > 1) throw new CliError(`too many arguments: ${others.join(' ')}\n${CANCEL_USAGE}`, 2);
    const dir = others[0];
    const body: Record<string, unknown> = { 'cancel-job': true };
    if (dir !== undefined) body['target-directory'] = pathForServer(dir);
    const { 'request-id': triggerId } = await rest<{ 'request-id': string }>(target, 'POST', `/jobs/${id}/savepoints`, body, TRIGGERED);
    const op = await awaitOperation(target, `/jobs/${id}/savepoints/${triggerId}`, 'cancel-with-savepoint', `Cancelling job ${id} with a savepoint`, SAVEPOINT_DONE);
    process.stdout.write(`Cancelled job ${id}. Savepoint: ${String(op.location)}\n`);
    return 0;
  }
  rejectUnknownOptions(argv, CANCEL_USAGE);
  const id = requireJobId(argv, CANCEL_USAGE);
  await rest(target, 'PATCH', `/jobs/${id}?mode=cancel`);
  process.stdout.write(`Cancelled job ${id}.\n`);
  return 0;
}

/** `sluice checkpoint <jobId> [--full]`: triggers a checkpoint and waits until it completed. */
export async function checkpointCommand(argv: string[]): Promise<number> {
  const target = parseTarget(argv);
  const full = argv.includes('--full');
  const unknown = argv.filter((a) => a.startsWith('-') && a !== '--full');
  if (unknown.length > 0) throw new CliError(`unknown option '${unknown[0]}'\n${CHECKPOINT_USAGE}`, 2);
  const id = requireJobId(argv, CHECKPOINT_USAGE);
  const checkpointId = await triggerCheckpoint(target, id, full);
  process.stdout.write(`Checkpoint ${checkpointId} of job ${id} completed.\n`);
  return 0;
}

/** Triggers a checkpoint of a job and waits for it: its id. */
export async function triggerCheckpoint(target: RestTarget, id: string, full: boolean): Promise<number> {
  const { 'request-id': triggerId } = await rest<{ 'request-id': string }>(target, 'POST', `/jobs/${id}/checkpoints`, { checkpointType: full ? 'FULL' : 'CONFIGURED' }, TRIGGERED);
  const op = await awaitOperation(target, `/jobs/${id}/checkpoints/${triggerId}`, 'the checkpoint', `Waiting for a ${full ? 'full ' : ''}checkpoint of job ${id}`, CHECKPOINT_DONE);
  return Number(op.checkpointId);
}

/** The fields of GET /jobs/:jobid/checkpoints that the counts line and the table show (Flink's have them all). */
const CHECKPOINTS: ResponseShape = {
  counts: { completed: 'number', failed: 'number', in_progress: 'number', restored: 'number' },
  history: [
    {
      id: 'number',
      status: 'string',
      checkpoint_type: 'string',
      trigger_timestamp: 'number',
      end_to_end_duration: 'number',
      state_size: 'number',
      persisted_data: 'number',
      num_subtasks: 'number',
      num_acknowledged_subtasks: 'number',
    },
  ],
};

/** `sluice checkpoints <jobId>`: the checkpoint history as a table. */
export async function checkpointsCommand(argv: string[]): Promise<number> {
  const target = parseTarget(argv);
  rejectUnknownOptions(argv, CHECKPOINTS_USAGE);
  const id = requireJobId(argv, CHECKPOINTS_USAGE);
  const r = await rest<{ counts: Record<string, number>; history: Record<string, unknown>[] }>(target, 'GET', `/jobs/${id}/checkpoints`, undefined, CHECKPOINTS);
  const entries: CheckpointStatsEntry[] = r.history.map((h) => ({
    id: h.id as number,
    status: h.status as CheckpointStatsEntry['status'],
    isSavepoint: h.is_savepoint as boolean,
    checkpointType: h.checkpoint_type as string,
    triggerTimestampMs: h.trigger_timestamp as number,
    latestAckTimestampMs: h.latest_ack_timestamp as number,
    stateSizeBytes: h.state_size as number,
    checkpointedSizeBytes: (h.checkpointed_size as number | undefined) ?? (h.state_size as number),
    endToEndDurationMs: (h.end_to_end_duration as number) < 0 ? undefined : (h.end_to_end_duration as number),
    numSubtasks: h.num_subtasks as number,
    numAcknowledgedSubtasks: h.num_acknowledged_subtasks as number,
    alignmentDurationMsMax: 0,
    persistedInFlightRecords: h.persisted_data as number,
    externalPath: h.external_path as string | undefined,
    failureMessage: h.failure_message as string | undefined,
    subtasks: [],
  }));
  const c = r.counts;
  process.stdout.write(`completed ${c.completed}, failed ${c.failed}, in progress ${c.in_progress}, restored ${c.restored}\n`);
  if (entries.length > 0) process.stdout.write(checkpointTable(entries) + '\n');
  return 0;
}

export const SAVEPOINT_USAGE =
  'usage: sluice savepoint [--jobmanager host:port] [--type canonical|native] <jobId> [targetDirectory]\n       sluice savepoint --dispose <savepointPath>\n       sluice savepoint inspect [--operator uid] [--samples N] [--json] [-D key=value]... <savepointPath>';

/**
 * Polls an asynchronous REST operation until it completed, showing progress; returns its
 * `operation`, which has the fields of `result` unless it failed.
 */
async function awaitOperation(target: RestTarget, path: string, what: string, waiting: string, result: ResponseShape): Promise<Record<string, unknown>> {
  const progress = new WaitProgress(waiting);
  try {
    for (;;) {
      const r = await rest<{ status: { id: string }; operation?: Record<string, unknown> & { 'failure-cause'?: { 'stack-trace': string } } }>(target, 'GET', path, undefined, { status: { id: 'string' } });
      if (r.status.id !== 'COMPLETED' && r.status.id !== 'IN_PROGRESS') throw unexpectedAnswer(target, 'GET', path, `'status.id' is '${r.status.id}', not IN_PROGRESS or COMPLETED`);
      if (r.status.id === 'COMPLETED') {
        const failure = r.operation?.['failure-cause'];
        const problem = failure === undefined ? shapeProblem(r, { operation: result }) : undefined;
        progress.stop(failure === undefined && problem === undefined ? 'done' : 'failed');
        if (problem !== undefined) throw unexpectedAnswer(target, 'GET', path, problem);
        if (failure !== undefined) throw new CliError(`${what} failed: ${failure['stack-trace']}`);
        return r.operation!;
      }
      await new Promise((res) => setTimeout(res, 200));
    }
  } finally {
    progress.stop('failed');
  }
}

/** `sluice savepoint <jobId> [dir]` and `sluice savepoint --dispose <path>`. */
export async function savepointCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'inspect') {
    const { savepointInspectCommand } = await import('./savepoint-inspect.js');
    return savepointInspectCommand(argv.slice(1));
  }
  const d = argv.indexOf('--dispose');
  if (d >= 0 || argv.includes('-d')) {
    const i = d >= 0 ? d : argv.indexOf('-d');
    const path = argv[i + 1];
    if (path === undefined) throw new CliError(`--dispose needs the savepoint's path\n${SAVEPOINT_USAGE}`, 2);
    const { disposeSavepoint } = await import('../runtime/storage/savepoint-directory.js');
    const { CheckpointStorageError } = await import('../runtime/storage/storage-errors.js');
    try {
      await disposeSavepoint(path);
    } catch (e) {
      // Its refusals name the path and the fix; anything else (EISDIR, EACCES, ...) is said here.
      if (e instanceof CheckpointStorageError) throw new CliError(e.message);
      throw new CliError(`cannot dispose of ${path}: ${(e as Error).message}; a savepoint path is the directory holding the savepoint's _metadata file, as printed by sluice savepoint and sluice stop`);
    }
    process.stdout.write(`Disposed savepoint ${path}.\n`);
    return 0;
  }
  const target = parseTarget(argv);
  let formatType = 'CANONICAL';
  const t = argv.indexOf('--type');
  if (t >= 0) {
    const v = (argv[t + 1] ?? '').toUpperCase();
    if (v !== 'CANONICAL' && v !== 'NATIVE') throw new CliError(`--type must be canonical or native\n${SAVEPOINT_USAGE}`, 2);
    formatType = v;
    argv.splice(t, 2);
  }
  rejectUnknownOptions(argv, SAVEPOINT_USAGE);
  const id = requireJobId(argv, SAVEPOINT_USAGE, 1);
  const dir = argv.filter((a) => !a.startsWith('-'))[1];
  const body: Record<string, unknown> = { formatType, 'cancel-job': false };
  if (dir !== undefined) body['target-directory'] = pathForServer(dir);
  const { 'request-id': triggerId } = await rest<{ 'request-id': string }>(target, 'POST', `/jobs/${id}/savepoints`, body, TRIGGERED);
  const op = await awaitOperation(target, `/jobs/${id}/savepoints/${triggerId}`, 'the savepoint', `Waiting for a savepoint of job ${id}`, SAVEPOINT_DONE);
  process.stdout.write(`Savepoint completed. Path: ${String(op.location)}\nResume with: sluice run -s ${String(op.location)} [options] <job.ts> [job args...]\n`);
  return 0;
}

export const STOP_USAGE = 'usage: sluice stop [--jobmanager host:port] [--savepoint-path dir] [--drain] [--type canonical|native] <jobId>';

/** `sluice stop <jobId>`: stop-with-savepoint; prints the savepoint's path. */
export async function stopCommand(argv: string[]): Promise<number> {
  const target = parseTarget(argv);
  let dir: string | undefined;
  let drain = false;
  let formatType = 'CANONICAL';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--savepoint-path' || a === '--savepointPath' || a === '-p') {
      dir = argv[i + 1];
      if (dir === undefined) throw new CliError(`${a} needs a directory\n${STOP_USAGE}`, 2);
      argv.splice(i, 2);
      i--;
    } else if (a === '--drain' || a === '-d') {
      drain = true;
      argv.splice(i, 1);
      i--;
    } else if (a === '--type') {
      const v = (argv[i + 1] ?? '').toUpperCase();
      if (v !== 'CANONICAL' && v !== 'NATIVE') throw new CliError(`--type must be canonical or native\n${STOP_USAGE}`, 2);
      formatType = v;
      argv.splice(i, 2);
      i--;
    } else if (a.startsWith('-')) throw new CliError(`unknown option '${a}'\n${STOP_USAGE}`, 2);
  }
  const id = requireJobId(argv, STOP_USAGE);
  const location = await stopWithSavepoint(target, id, { drain, formatType, ...(dir === undefined ? {} : { dir }) });
  process.stdout.write(`Job ${id} stopped. Savepoint: ${location}\nResume with: sluice run -s ${location} [options] <job.ts> [job args...]\n`);
  return 0;
}

/** Stops a job with a savepoint and waits for it: the savepoint's location. */
export async function stopWithSavepoint(target: RestTarget, id: string, o: { drain: boolean; formatType: string; dir?: string }): Promise<string> {
  const body: Record<string, unknown> = { drain: o.drain, formatType: o.formatType };
  if (o.dir !== undefined) body.targetDirectory = pathForServer(o.dir);
  const { 'request-id': triggerId } = await rest<{ 'request-id': string }>(target, 'POST', `/jobs/${id}/stop`, body, TRIGGERED);
  const op = await awaitOperation(target, `/jobs/${id}/savepoints/${triggerId}`, 'stop-with-savepoint', `Stopping job ${id} with a savepoint${o.drain ? ' (draining)' : ''}`, SAVEPOINT_DONE);
  return String(op.location);
}
