import { StreamExecutionEnvironment } from '../api/environment.js';
import { Configuration, ConfigError } from '../config/configuration.js';
import { GraphError } from '../graph/stream-graph.js';
import { JobExecutionError } from '../runtime/local-executor.js';
import type { Configuration as ConfigurationType } from '../config/configuration.js';
import { CliError, commandConfiguration } from './cli-error.js';
import { describeThrown } from '../util/thrown.js';
import { prepareJob, type PreparedJob } from './job-loader.js';
import type { JobDefinition } from '../api/define-job.js';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { newestSnapshotUnder } from '../runtime/storage/snapshot-directory-reader.js';
import type { JobGraph } from '../graph/job-graph.js';
import type { JobExecutor } from '../runtime/job-executor.js';
import { LocalCluster } from '../cluster/local-cluster.js';
import { parseTarget, pathForServer, rest, type RestTarget } from './rest-client.js';
import { FIRST_ATTEMPT_WAIT_MS, firstAttemptOutcome, reportFirstAttempt, stillStarting, type JobResultView } from './first-attempt.js';
import { ProgressLine } from './progress-line.js';
import { LocalExecutor } from '../runtime/local-executor.js';
import { OPERATION_RESULT_GRACE_MS, RestServer } from '../rest/rest-server.js';
import { checkpointTable } from './checkpoint-table.js';
import { UPPER_BOUND_MAX_PARALLELISM } from '../runtime/state/key-group.js';
import { loggingSettings, processLogger, type LogFields, type LogLevel } from '../util/logger.js';
import { applyLogging, LOG_FLAGS, LOG_USAGE, setLogFlag } from './log-options.js';
import { normalizeStorageUri } from '../config/storage-uri.js';

/**
 * A line about the job on stderr: as it is in the plain format; with `--log-format json`, a
 * log line like the runtime's (stderr is then JSON lines only).
 */
function report(message: string, fields: LogFields = {}, level: LogLevel = 'info'): void {
  if (loggingSettings().format === 'json') processLogger('sluice')[level](message, fields);
  else process.stderr.write(`${message}\n`);
}

function printCheckpoints(entries: readonly import('../runtime/checkpoint/checkpoint-stats.js').CheckpointStatsEntry[]): void {
  // A table is for a terminal; JSON lines stay JSON (GET /jobs/:id/checkpoints has it all).
  if (entries.length === 0 || loggingSettings().format === 'json') return;
  const shown = entries.slice(0, 20);
  process.stderr.write(`Checkpoints (${entries.length}${entries.length > shown.length ? `, newest ${shown.length} shown` : ''}):\n${checkpointTable(shown)}\n`);
}

export const RUN_USAGE = `usage: sluice run [[--jobmanager host:port] [--detached] | --embedded] [-p N] [-D key=value]... [-s <savepoint or checkpoint> | --resume <checkpoint dir> [--allow-non-restored-state] [--claim-mode claim|no_claim]] [--no-typecheck] [--progress|--no-progress] ${LOG_USAGE} <job.ts> [job args...]`;

export interface RunArgs {
  readonly jobPath: string;
  readonly jobArgs: string[];
  readonly config: Configuration;
  readonly typeCheck: boolean;
  readonly progress: boolean | undefined;
  readonly restorePath: string | undefined;
  /** `--resume <dir>`: restorePath is to be the newest completed checkpoint under it (see resolveResume). */
  readonly resumeDir: string | undefined;
  readonly allowNonRestoredState: boolean;
  /**
   * REST address of a JobManager to submit to; undefined: run here, unless `detached`, which
   * submits to the job commands' default address (SLUICE_JOBMANAGER, the configuration file's
   * rest.address and rest.port, else 127.0.0.1:8081).
   */
  readonly jobManager: string | undefined;
  readonly token: string | undefined;
  readonly detached: boolean;
  /** Run every subtask in this process (no TaskManager processes). */
  readonly embedded: boolean;
  /** The command line as given (after `run`), for the command that resumes the job. */
  readonly argv: readonly string[];
}

/** -D assignments whose value is not printed (rest.auth.token, cluster.secret, s3.secret-key, ...). */
const SECRET_KEY = /^[^=]*(token|secret|password)[^=]*=/i;

/** `s` as one word of a POSIX shell command. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The `sluice run` command that resumes the job from `path`: the same options, job file and
 * job arguments, with `-s path` instead of the restore options it was started with.
 */
export function resumeCommand(argv: readonly string[], path: string): string {
  const kept: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-s' || a === '--fromSavepoint' || a === '--from-savepoint' || a === '--resume' || a === '--claim-mode' || a === '--claimMode' || a === '-rm') i++;
    else if (a === '-n' || a === '--allow-non-restored-state' || a === '--allowNonRestoredState') continue;
    else if (a === '--') break;
    else if (a === '--token') kept.push(a, (i++, '<token>'));
    else if ((a === '-D' && SECRET_KEY.test(argv[i + 1] ?? '')) || (a.startsWith('-D') && a.length > 2 && SECRET_KEY.test(a.slice(2)))) {
      const assignment = a === '-D' ? argv[++i]! : a.slice(2);
      kept.push('-D', `${assignment.slice(0, assignment.indexOf('='))}=<hidden>`);
    } else if (RUN_OPTIONS_WITH_VALUE.has(a)) kept.push(a, argv[++i] ?? '');
    else if (a.startsWith('-')) kept.push(a);
    else break;
  }
  return ['sluice', 'run', '-s', path, ...kept, ...argv.slice(i)].map(shellWord).join(' ');
}

/** Options of `sluice run` that take a value, and those that do not (as parseRunArgs reads them; test/cli.test.ts checks them against RUN_USAGE). */
/** A snapshot path or directory given on the command line: `file:///...` read as its path, as Flink's CLI reads it. */
function storageArgument(text: string, flag: string): string {
  try {
    return normalizeStorageUri(text);
  } catch (e) {
    throw new CliError(`${flag}: ${(e as Error).message}`, 2);
  }
}

export const RUN_OPTIONS_WITH_VALUE = new Set(['-p', '--parallelism', '-D', '-m', '--jobmanager', '--token', '-s', '--fromSavepoint', '--from-savepoint', '--resume', '--claim-mode', '--claimMode', '-rm', ...Object.keys(LOG_FLAGS)]);
const RUN_FLAGS = new Set(['--no-typecheck', '-d', '--detached', '--embedded', '--progress', '--no-progress', '-n', '--allow-non-restored-state', '--allowNonRestoredState']);

/**
 * When the job's arguments hold options of `sluice run` (everything after the job file goes
 * to the job, as in Flink's CLI), a note saying so, for the error of a job that could not
 * make sense of them; '' when they hold none.
 */
export function misplacedOptionsNote(jobArgs: readonly string[]): string {
  const found: string[] = [];
  for (let k = 0; k < jobArgs.length; k++) {
    const a = jobArgs[k]!;
    if (RUN_OPTIONS_WITH_VALUE.has(a)) found.push(jobArgs[k + 1] === undefined ? a : `${a} ${jobArgs[++k]}`);
    else if (RUN_FLAGS.has(a) || a.startsWith('--parallelism=') || (a.startsWith('-D') && a.includes('='))) found.push(a);
  }
  if (found.length === 0) return '';
  return (
    `\nnote: ${found.map((f) => `'${f}'`).join(', ')} came after the job file, so the job got ${found.length === 1 ? 'it' : 'them'} as arguments; ` +
    `options of sluice run go before the job file: sluice run ${found.join(' ')} <job.ts> [job args...]`
  );
}

/**
 * The stack frames of an error thrown by a job's definition, down to the job file's last
 * frame (the CLI's own frames below it say nothing to the job's author); at most 8 when no
 * frame is in the job file.
 */
export function jobFrames(e: Error, jobFile: string): string {
  const frames = (e.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l));
  let last = -1;
  frames.forEach((f, k) => {
    if (f.includes(jobFile)) last = k;
  });
  const shown = last >= 0 ? frames.slice(0, last + 1) : frames.slice(0, 8);
  return shown.length === 0 ? '' : `\n${shown.join('\n')}`;
}

/** The value of -p/--parallelism (`flag`, as given): an integer in [1, UPPER_BOUND_MAX_PARALLELISM], as in Flink. */
function parseParallelism(text: string | undefined, flag: string): number {
  if (text === undefined) throw new CliError(`${flag} needs a value\n${RUN_USAGE}`, 2);
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > UPPER_BOUND_MAX_PARALLELISM) {
    throw new CliError(`invalid parallelism '${text}': give an integer >= 1 and <= ${UPPER_BOUND_MAX_PARALLELISM} (Flink's upper bound), e.g. ${flag} 2`, 2);
  }
  return Number(text);
}

export function parseRunArgs(argv: readonly string[]): RunArgs {
  const config = commandConfiguration();
  let typeCheck = true;
  let progress: boolean | undefined;
  let restorePath: string | undefined;
  let resumeDir: string | undefined;
  // The restore options as given (-n, --claim-mode, ...): they only apply with -s.
  let allowNonRestoredStateFlag: string | undefined;
  let claimModeFlag: string | undefined;
  let jobManager: string | undefined;
  let token: string | undefined;
  let detached = false;
  let embedded = false;
  let i = 0;
  const setConfig = (assignment: string | undefined): void => {
    if (assignment === undefined) throw new CliError(`-D needs key=value\n${RUN_USAGE}`, 2);
    try {
      config.setFromString(assignment);
    } catch (e) {
      if (e instanceof ConfigError) throw new CliError(e.message, 2);
      throw e;
    }
  };
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-p' || a === '--parallelism') config.set('parallelism.default', parseParallelism(argv[++i], a));
    else if (a.startsWith('--parallelism=')) config.set('parallelism.default', parseParallelism(a.slice('--parallelism='.length), '--parallelism'));
    else if (a === '-D') setConfig(argv[++i]);
    else if (a.startsWith('-D')) setConfig(a.slice(2));
    else if (a === '--no-typecheck') typeCheck = false;
    else if (LOG_FLAGS[a] !== undefined) setLogFlag(config, a, argv[++i], RUN_USAGE);
    else if (LOG_FLAGS[a.split('=', 1)[0]!] !== undefined) setLogFlag(config, a.split('=', 1)[0]!, a.slice(a.indexOf('=') + 1), RUN_USAGE);
    else if (a === '-m' || a === '--jobmanager') {
      jobManager = argv[++i];
      if (jobManager === undefined) throw new CliError(`${a} needs the JobManager's REST address host:port\n${RUN_USAGE}`, 2);
    } else if (a === '--token') {
      token = argv[++i];
      if (token === undefined) throw new CliError(`--token needs a value\n${RUN_USAGE}`, 2);
    } else if (a === '-d' || a === '--detached') detached = true;
    else if (a === '--embedded') embedded = true;
    else if (a === '--progress') progress = true;
    else if (a === '--no-progress') progress = false;
    else if (a === '--help' || a === '-h') throw new CliError(RUN_USAGE, 0);
    else if (a === '-s' || a === '--fromSavepoint' || a === '--from-savepoint') {
      restorePath = argv[++i];
      if (restorePath === undefined) throw new CliError(`${a} needs the path of a savepoint or retained checkpoint\n${RUN_USAGE}`, 2);
      restorePath = storageArgument(restorePath, a);
    } else if (a === '--resume') {
      resumeDir = argv[++i];
      if (resumeDir === undefined) throw new CliError(`--resume needs a checkpoint directory (the execution.checkpointing.dir of the run to resume, or a job's directory in it)\n${RUN_USAGE}`, 2);
      resumeDir = storageArgument(resumeDir, a);
    } else if (a === '-n' || a === '--allow-non-restored-state' || a === '--allowNonRestoredState') allowNonRestoredStateFlag = a;
    else if (a === '--claim-mode' || a === '--claimMode' || a === '-rm') {
      const mode = argv[++i]?.toUpperCase();
      if (mode !== 'CLAIM' && mode !== 'NO_CLAIM') throw new CliError(`${a} needs claim or no_claim\n${RUN_USAGE}`, 2);
      config.set('execution.state-recovery.claim-mode', mode);
      claimModeFlag = a;
    }
    else if (a === '--') {
      i++;
      break;
    } else if (a.startsWith('-')) throw new CliError(`unknown option '${a}'\n${RUN_USAGE}`, 2);
    else break;
  }
  const jobPath = argv[i];
  if (jobPath === undefined) throw new CliError(`no job file given\n${RUN_USAGE}`, 2);
  if (resumeDir !== undefined && restorePath !== undefined) {
    throw new CliError(`-s and --resume exclude each other: -s names one savepoint or checkpoint, --resume finds the newest checkpoint under a directory\n${RUN_USAGE}`, 2);
  }
  if (allowNonRestoredStateFlag !== undefined && restorePath === undefined && resumeDir === undefined) {
    throw new CliError(`${allowNonRestoredStateFlag} needs -s <path>: it lets a restore skip state no operator of the job takes; give -s <savepoint or checkpoint>, or drop ${allowNonRestoredStateFlag}\n${RUN_USAGE}`, 2);
  }
  if (claimModeFlag !== undefined && restorePath === undefined && resumeDir === undefined) {
    throw new CliError(`${claimModeFlag} only applies with -s <path>: it says who owns the snapshot a run restores from; give -s <savepoint or checkpoint>, or drop ${claimModeFlag}\n${RUN_USAGE}`, 2);
  }
  const allowNonRestoredState = allowNonRestoredStateFlag !== undefined;
  if (token !== undefined && jobManager === undefined && !detached) {
    throw new CliError(`--token is the token for the REST API of the JobManager given with --jobmanager; to make this run's REST API ask for a token, set -D rest.auth.token=<token>\n${RUN_USAGE}`, 2);
  }
  if (embedded && jobManager !== undefined) throw new CliError(`--embedded and --jobmanager exclude each other\n${RUN_USAGE}`, 2);
  if (embedded && detached) throw new CliError(`--embedded and --detached exclude each other: a detached job runs on a cluster (sluice cluster start), an embedded one in this process\n${RUN_USAGE}`, 2);
  return { jobPath, jobArgs: argv.slice(i + 1), config, typeCheck, progress, restorePath, resumeDir, allowNonRestoredState, jobManager, token, detached, embedded, argv };
}

/**
 * Awaits the loading or the definition of a job. A job module that awaits something that can
 * never happen (a promise nobody resolves) leaves the process without work, and Node would exit
 * with code 0 as if all went well: this fails instead, naming the file.
 */
export async function unlessStalled<T>(work: Promise<T>, jobPath: string): Promise<T> {
  let onStall = (): void => {};
  const stalled = new Promise<never>((_, reject) => {
    onStall = () =>
      reject(
        new CliError(
          `${jobPath}: the job's definition never finished: it awaits something that cannot happen any more (a promise that is never resolved, at the top of the module or in the defineJob function)`,
        ),
      );
  });
  process.once('beforeExit', onStall);
  try {
    return await Promise.race([work, stalled]);
  } finally {
    process.off('beforeExit', onStall);
  }
}

/**
 * `--resume <dir>`: the newest completed checkpoint under the directory becomes the restore
 * path (said on stderr); a directory without one is an error naming what it holds and the fix.
 */
async function resolveResume(args: RunArgs): Promise<RunArgs> {
  if (args.resumeDir === undefined) return args;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(args.resumeDir)) {
    throw new CliError(`--resume looks for checkpoints in a local directory; for ${args.resumeDir}, pass the checkpoint itself with -s <dir>/<jobId>/chk-N`, 2);
  }
  const found = await newestSnapshotUnder(args.resumeDir);
  if (found === undefined) {
    const why = existsSync(args.resumeDir) ? 'holds no completed checkpoint' : 'does not exist';
    throw new CliError(
      `--resume ${args.resumeDir}: the directory ${why}, so there is nothing to resume from. Give the execution.checkpointing.dir of the run to resume (checkpoints live in <dir>/<jobId>/chk-N), or run without --resume to start from the beginning`,
    );
  }
  report(`Resuming from the newest checkpoint under ${args.resumeDir}: ${found}`);
  return { ...args, restorePath: found };
}

/** `sluice run`: runs a job on the local embedded runtime; resolves with the exit code. */
export async function runCommand(argv: readonly string[]): Promise<number> {
  const parsed = parseRunArgs(argv);
  applyLogging(parsed.config);
  const args = await resolveResume(parsed);
  if (args.jobManager !== undefined || args.detached) return submitToCluster(args);
  const prepared = await unlessStalled(prepareJob(args.jobPath, { typeCheck: args.typeCheck }), args.jobPath);
  const { env, graph } = await buildJobGraph(args, prepared.definition);
  if (!args.embedded) return runOnLocalCluster(args, prepared.code, graph);
  let executor: LocalExecutor;
  try {
    executor = new LocalExecutor(
      graph,
      env.config,
      args.restorePath === undefined ? {} : { restoreFrom: { path: args.restorePath, allowNonRestoredState: args.allowNonRestoredState } },
    );
  } catch (e) {
    if (e instanceof GraphError || e instanceof ConfigError) throw new CliError(`${args.jobPath}: ${e.message}`);
    throw e;
  }
  const rest = args.config.getBoolean('rest.enabled') ? await startRest(args.config, executor) : undefined;
  try {
    return await awaitJob(args, executor);
  } finally {
    await rest?.stop();
  }
}

/** Runs a job's definition on a fresh environment with the run's configuration and arguments: its graph; errors name the job file and the fix. */
export async function buildJobGraph(args: RunArgs, job: JobDefinition): Promise<{ env: StreamExecutionEnvironment; graph: JobGraph }> {
  const env = StreamExecutionEnvironment.forJobDefinition(args.config);
  try {
    await unlessStalled(Promise.resolve(job.build(env, args.jobArgs)), args.jobPath);
  } catch (e) {
    const note = misplacedOptionsNote(args.jobArgs);
    if (e instanceof CliError) throw e;
    if (e instanceof ConfigError || e instanceof GraphError) throw new CliError(`${args.jobPath}: ${e.message}${note}`);
    if (e instanceof Error) throw new CliError(`${args.jobPath}: the job's definition threw ${e.name}: ${e.message}${note}${jobFrames(e, resolve(args.jobPath))}`);
    throw new CliError(`${args.jobPath}: the job's definition threw a non-Error value: ${describeThrown(e)}${note} (throw an Error to get a stack trace)`);
  }
  if (env.isEmpty) throw new CliError(`${args.jobPath} built no dataflow: add a source (env.fromSource) and a sink (sinkTo)`);
  try {
    return { env, graph: env.getJobGraph(args.config.getString('pipeline.name') ?? args.jobPath) };
  } catch (e) {
    if (e instanceof GraphError || e instanceof ConfigError) throw new CliError(`${args.jobPath}: ${e.message}`);
    throw e;
  }
}

/** Waits for the job's end with a progress line; prints its checkpoints and outcome; the exit code. */
async function awaitJob(args: RunArgs, executor: JobExecutor): Promise<number> {
  const showProgress = args.progress ?? (process.stderr.isTTY === true && loggingSettings().format === 'plain');
  const line = showProgress ? new ProgressLine(() => executor.progress()) : undefined;
  line?.start();
  // Ctrl-C cancels the job (its checkpoints go as the retention says); SIGTERM suspends it,
  // keeping its checkpoints, and names the one to resume from.
  const onInterrupt = (): void => executor.cancel();
  const onTerminate = (): void => executor.suspend();
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onTerminate);
  try {
    const result = await executor.run();
    line?.stop();
    printCheckpoints(executor.checkpointStats.entries());
    const restarts = result.numRestarts > 0 ? `, ${result.numRestarts} restart(s)` : '';
    report(`Job ${result.jobId} ${result.status.toLowerCase()} in ${result.durationMs} ms${restarts}`, { jobId: result.jobId });
    if (result.status === 'SUSPENDED') {
      report(
        result.latestCheckpoint === undefined
          ? 'It had completed no checkpoint: running it again starts from the beginning.'
          : `Resume it with: ${resumeCommand(args.argv, result.latestCheckpoint)}`,
        { jobId: result.jobId },
      );
      return 143; // ended by SIGTERM
    }
    return 0;
  } catch (e) {
    line?.stop();
    printCheckpoints(executor.checkpointStats.entries());
    if (e instanceof JobExecutionError) {
      let cause = e.cause;
      while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
      report(`Job ${executor.jobId} failed: ${e.message}`, { jobId: executor.jobId, ...(cause instanceof Error ? { err: cause } : {}) }, 'error');
      if (cause instanceof Error && cause.stack && loggingSettings().format === 'plain') process.stderr.write(`root cause: ${cause.stack}\n`);
      return 1;
    }
    // Problems found when the job starts (configuration, storage, state): one clear line.
    if (e instanceof Error) throw new CliError(`${args.jobPath}: ${e.message}`);
    throw e;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
  }
}

/**
 * The default of `sluice run`: an embedded local cluster, the JobManager in this process and
 * one TaskManager process per core (at most one per parallel pipeline), with enough slots
 * for the job; it goes away with the job.
 */
async function runOnLocalCluster(args: RunArgs, bundle: string, graph: JobGraph): Promise<number> {
  const maxParallelism = Math.max(...graph.vertices.map((v) => v.parallelism));
  const taskManagers = Math.max(1, Math.min(availableParallelism(), maxParallelism));
  const log = processLogger('sluice');
  const start = async (config: Configuration): Promise<LocalCluster> => {
    const c = new LocalCluster({
      config,
      taskManagers,
      slotsPerTaskManager: Math.ceil(maxParallelism / taskManagers),
      log: () => {},
      jobLog: log,
      quietTaskManagers: true,
      // The cluster goes away with this job: a run killed with it is resumed with -s from its
      // latest retained checkpoint, not taken back by whichever run comes next.
      highAvailability: false,
      rest: args.config.getBoolean('rest.enabled'),
    });
    try {
      await c.start();
      return c;
    } catch (e) {
      await c.stop();
      throw e;
    }
  };
  if (args.config.getString('high-availability.storageDir') !== undefined) {
    log.warn('high-availability.storageDir is not used by the embedded cluster of `sluice run`, which goes away with the job; a JobManager that takes its jobs back after a restart is `sluice jobmanager` or `sluice cluster start`');
  }
  const clusterConfig = new Configuration(args.config.entries());
  clusterConfig.set('jobmanager.rpc.port', 0);
  let cluster: LocalCluster;
  try {
    cluster = await start(clusterConfig);
  } catch (e) {
    // The JobManager names the taken port in its own error; the system's is its cause.
    const code = (e as NodeJS.ErrnoException).code ?? ((e as Error).cause as NodeJS.ErrnoException | undefined)?.code;
    if (code !== 'EADDRINUSE') throw new CliError(`cannot start the local cluster: ${(e as Error).message}`);
    clusterConfig.set('rest.port', 0);
    cluster = await start(clusterConfig);
  }
  try {
    let executor: JobExecutor;
    try {
      executor = await cluster.jobManager.submit({
        bundle,
        config: args.config.entries(),
        args: args.jobArgs,
        name: graph.jobName,
        savepointPath: args.restorePath,
        allowNonRestoredState: args.allowNonRestoredState,
      });
    } catch (e) {
      throw new CliError(`${args.jobPath}: ${(e as Error).message}${misplacedOptionsNote(args.jobArgs)}`);
    }
    if (args.config.getBoolean('rest.enabled')) {
      report(`Job ${executor.jobId} submitted to a local cluster of ${taskManagers} TaskManager process(es); REST API at ${cluster.jobManager.restUrl}`, { jobId: executor.jobId });
    }
    return await awaitJob(args, executor);
  } finally {
    // A `sluice stop` that ended the job is still polling for its result.
    await cluster.stop(OPERATION_RESULT_GRACE_MS);
  }
}

/** Serves the REST API for the job: on rest.port, or a free port when that one is taken. */
async function startRest(config: ConfigurationType, executor: LocalExecutor): Promise<RestServer> {
  const options = {
    address: config.getString('rest.address') ?? '127.0.0.1',
    port: config.getNumber('rest.port'),
    ...(config.getString('rest.auth.token') === undefined ? {} : { authToken: config.getString('rest.auth.token')! }),
  };
  let server = new RestServer(options);
  let url: string;
  try {
    url = await server.start();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
      throw new CliError(
        `cannot serve the REST API on ${options.address}:${options.port} (rest.address, rest.port): ${(e as Error).message}; give an address of this machine with -D rest.address=<address>`,
      );
    }
    server = new RestServer({ ...options, port: 0 });
    url = await server.start();
  }
  server.register(executor);
  report(`Job ${executor.jobId} submitted; REST API at ${url}`, { jobId: executor.jobId });
  return server;
}

/**
 * `sluice run --detached`: waits for the submitted job's first attempt to run (every task
 * running), to fail, or FIRST_ATTEMPT_WAIT_MS; says which, and how to follow the job.
 */
async function awaitFirstAttempt(target: RestTarget, jobid: string, args: RunArgs): Promise<number> {
  // The job commands reach the same address without --jobmanager when `run -d` was given none.
  const cli = [...(args.jobManager === undefined ? [] : ['--jobmanager', shellWord(args.jobManager)]), ...(args.token === undefined ? [] : ['--token', '<token>'])].join(' ');
  const startedMs = Date.now();
  let last: JobResultView | undefined;
  while (Date.now() - startedMs < FIRST_ATTEMPT_WAIT_MS) {
    last = await rest<JobResultView>(target, 'GET', `/jobs/${jobid}/result`, undefined, { status: 'string', numRestarts: 'number' });
    const outcome = firstAttemptOutcome(last);
    if (outcome.kind !== 'waiting') {
      const { text, exitCode } = reportFirstAttempt(jobid, outcome, cli);
      report(text, { jobId: jobid }, exitCode === 0 ? 'info' : 'error');
      return exitCode;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  report(stillStarting(jobid, last, Date.now() - startedMs, cli), { jobId: jobid }, 'warn');
  return 0;
}

/** `sluice run --jobmanager host:port`: bundles the job, submits it and (unless detached) waits for its end. */
async function submitToCluster(args: RunArgs): Promise<number> {
  return submitPrepared(args, await unlessStalled(prepareJob(args.jobPath, { typeCheck: args.typeCheck }), args.jobPath));
}

/** Submits a prepared job to the cluster of `args` (detached: until its first attempt runs; else to its end): the exit code. */
export async function submitPrepared(args: RunArgs, prepared: PreparedJob): Promise<number> {
  const target = parseTarget([...(args.jobManager === undefined ? [] : ['--jobmanager', args.jobManager]), ...(args.token === undefined ? [] : ['--token', args.token])]);
  const submission = {
    bundle: prepared.code,
    config: args.config.entries(),
    args: args.jobArgs,
    name: args.config.getString('pipeline.name') ?? args.jobPath,
    savepointPath: args.restorePath === undefined ? undefined : pathForServer(args.restorePath),
    allowNonRestoredState: args.allowNonRestoredState,
  };
  let jobid: string;
  try {
    ({ jobid } = await rest<{ jobid: string }>(target, 'POST', '/jobs', submission, { jobid: 'string' }));
  } catch (e) {
    if (e instanceof CliError && args.jobManager === undefined && e.message.startsWith('cannot reach')) {
      throw new CliError(
        `-d submits to a running cluster, and there is none at ${target.baseUrl} (the address of the job commands: SLUICE_JOBMANAGER, else rest.address and rest.port of the configuration file, else 127.0.0.1:8081): ` +
          'start one with sluice cluster start, or give its REST address with --jobmanager host:port',
      );
    }
    const note = misplacedOptionsNote(args.jobArgs);
    if (e instanceof CliError && note !== '') throw new CliError(`${e.message}${note}`, e.exitCode);
    throw e;
  }
  report(`Job ${jobid} submitted to ${target.baseUrl}`, { jobId: jobid });
  process.stdout.write(`${jobid}\n`);
  if (args.detached) return awaitFirstAttempt(target, jobid, args);
  for (;;) {
    const r = await rest<{ status: string; numRestarts: number; failure: string | undefined }>(target, 'GET', `/jobs/${jobid}/result`, undefined, { status: 'string', numRestarts: 'number' });
    if (r.status === 'FINISHED' || r.status === 'CANCELED') {
      report(`Job ${jobid} ${r.status.toLowerCase()}${r.numRestarts > 0 ? `, ${r.numRestarts} restart(s)` : ''}`, { jobId: jobid });
      return 0;
    }
    if (r.status === 'FAILED') {
      report(`Job ${jobid} failed: ${r.failure ?? 'unknown cause'}`, { jobId: jobid }, 'error');
      return 1;
    }
    if (r.status === 'SUSPENDED') {
      report(`Job ${jobid} suspended: the JobManager is shutting down; started again on the same high-availability directory, it takes the job back`, { jobId: jobid }, 'warn');
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
