import { ConfigError, type Configuration } from '../config/configuration.js';
import { configureLogging, type LogFormat, type LogLevel } from '../util/logger.js';
import { CliError } from './cli-error.js';

/** The command-line flags of the logging keys (`--log-level warn` is `-D log.level=warn`). */
export const LOG_FLAGS: Readonly<Record<string, string>> = { '--log-level': 'log.level', '--log-format': 'log.format' };

export const LOG_USAGE = '[--log-level debug|info|warn|error] [--log-format plain|json]';

/** Sets the key of a logging flag; a bad value ends the command with exit code 2. */
export function setLogFlag(config: Configuration, flag: string, value: string | undefined, usage: string): void {
  const key = LOG_FLAGS[flag];
  if (key === undefined) throw new Error(`${flag} is not a logging flag`);
  if (value === undefined) throw new CliError(`${flag} needs a value\n${usage}`, 2);
  try {
    config.set(key, value);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(`${flag}: ${e.message}`, 2);
    throw e;
  }
}

/** This process logs at `log.level` in `log.format` from now on. */
export function applyLogging(config: Configuration): void {
  configureLogging({ level: config.getString('log.level') as LogLevel, format: config.getString('log.format') as LogFormat });
}
