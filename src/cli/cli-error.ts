import { baseConfiguration } from '../config/config-file.js';
import { ConfigError, type Configuration } from '../config/configuration.js';
/** An error the CLI reports as one clear message (no stack), with exit code 1 or 2. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The configuration a command starts from (conf/config.yaml or $SLUICE_CONF_DIR/config.yaml, if there is one); its errors end the command with exit code 2. */
export function commandConfiguration(): Configuration {
  try {
    return baseConfiguration();
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message, 2);
    throw e;
  }
}
