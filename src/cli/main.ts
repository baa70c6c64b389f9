import { readFileSync } from 'node:fs';
import { CliError } from './cli-error.js';
import { INIT_USAGE, initCommand } from './init-command.js';
import { RUN_USAGE, runCommand } from './run-command.js';
import { INFO_USAGE, infoCommand } from './info-command.js';
import { CLUSTER_USAGE, JOBMANAGER_USAGE, TASKMANAGER_USAGE, clusterCommand, jobManagerCommand, taskManagerCommand } from './cluster-commands.js';
import {
  CANCEL_USAGE,
  CHECKPOINT_USAGE,
  CHECKPOINTS_USAGE,
  LIST_USAGE,
  SAVEPOINT_USAGE,
  STOP_USAGE,
  cancelCommand,
  checkpointCommand,
  checkpointsCommand,
  listCommand,
  savepointCommand,
  stopCommand,
} from './job-commands.js';
import { UPGRADE_USAGE, upgradeCommand } from './upgrade-command.js';

const USAGE = `sluice: a stream processor for TypeScript with Flink's fault-tolerance model

commands:
  init         write a new project: a first job, its test, package.json and tsconfig.json
               ${INIT_USAGE}
  run          run a job on the local embedded runtime (serves the REST API for it)
               ${RUN_USAGE}
  list         the jobs of a running Sluice: ${LIST_USAGE}
  info         a job's state, vertices and records: ${INFO_USAGE}
  cancel       ${CANCEL_USAGE}
  checkpoint   trigger a checkpoint and wait for it: ${CHECKPOINT_USAGE}
  checkpoints  a job's checkpoint history: ${CHECKPOINTS_USAGE}
  stop         stop with a savepoint: ${STOP_USAGE}
  upgrade      replace a running job by a new version from a savepoint, checked first:
               ${UPGRADE_USAGE}
  savepoint    take, dispose of or inspect a savepoint:
               ${SAVEPOINT_USAGE}
  jobmanager   run a JobManager: ${JOBMANAGER_USAGE}
  taskmanager  run a TaskManager: ${TASKMANAGER_USAGE}
  cluster      a standalone cluster on this machine: ${CLUSTER_USAGE}
  help         this text
  --version    the version of Sluice and of Node.js (also -V)

docs: docs/ in the Sluice repository`;

/** Usage of each command but run, by name. */
const COMMAND_USAGE: Readonly<Record<string, string>> = {
  init: INIT_USAGE,
  list: LIST_USAGE,
  info: INFO_USAGE,
  cancel: CANCEL_USAGE,
  checkpoint: CHECKPOINT_USAGE,
  checkpoints: CHECKPOINTS_USAGE,
  savepoint: SAVEPOINT_USAGE,
  stop: STOP_USAGE,
  upgrade: UPGRADE_USAGE,
  jobmanager: JOBMANAGER_USAGE,
  taskmanager: TASKMANAGER_USAGE,
  cluster: CLUSTER_USAGE,
};

/** The version in Sluice's package.json (two directories up, from src/cli or dist/cli). */
export function sluiceVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  if (typeof pkg.version !== 'string') throw new Error("Sluice's package.json has no version");
  return pkg.version;
}

/** Entry point of the `sluice` command; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  // Stack traces of job code point at the job's own files (the bundle carries a source map).
  process.setSourceMapsEnabled(true);
  const [verb, ...rest] = argv;
  try {
    // `sluice <command> --help`: the command's usage (run parses its own: a job's arguments may hold --help).
    const usage = verb === undefined ? undefined : COMMAND_USAGE[verb];
    if (usage !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
      process.stdout.write(usage + '\n');
      return 0;
    }
    switch (verb) {
      case 'init':
        return await initCommand(rest);
      case 'run':
        return await runCommand(rest);
      case 'list':
        return await listCommand(rest);
      case 'info':
        return await infoCommand(rest);
      case 'cancel':
        return await cancelCommand(rest);
      case 'checkpoint':
        return await checkpointCommand(rest);
      case 'checkpoints':
        return await checkpointsCommand(rest);
      case 'savepoint':
        return await savepointCommand(rest);
      case 'stop':
        return await stopCommand(rest);
      case 'upgrade':
        return await upgradeCommand(rest);
      case 'jobmanager':
        return await jobManagerCommand(rest);
      case 'taskmanager':
        return await taskManagerCommand(rest);
      case 'cluster':
        return await clusterCommand(rest);
      case '--version':
      case '-V':
      case 'version':
        process.stdout.write(`sluice ${sluiceVersion()} (Node.js ${process.version})\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE + '\n');
        return verb === undefined ? 2 : 0;
      default:
        throw new CliError(`unknown command '${verb}'\n\n${USAGE}`, 2);
    }
  } catch (e) {
    if (e instanceof CliError) {
      if (e.exitCode === 0) process.stdout.write(`${e.message}\n`);
      else process.stderr.write(`error: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}
