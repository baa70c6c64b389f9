import { CliError } from './cli-error.js';
import { RUN_USAGE, runCommand } from './run-command.js';

const USAGE = `sluice: a stream processor for TypeScript with Flink's fault-tolerance model

commands:
  run        run a job on the local embedded runtime
             ${RUN_USAGE}
  help       this text

docs: docs/ in the Sluice repository`;

/** Entry point of the `sluice` command; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  // Stack traces of job code point at the job's own files (the bundle carries a source map).
  process.setSourceMapsEnabled(true);
  const [verb, ...rest] = argv;
  try {
    switch (verb) {
      case 'run':
        return await runCommand(rest);
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
      process.stderr.write(`error: ${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
}
