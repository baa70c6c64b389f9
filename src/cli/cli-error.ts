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
