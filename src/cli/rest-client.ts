import { resolve as resolvePath } from 'node:path';
import { CliError } from './cli-error.js';

export interface RestTarget {
  readonly baseUrl: string;
  readonly token: string | undefined;
}

/** `--jobmanager host:port` (default 127.0.0.1:8081) and `--token`, removed from argv. */
export function parseTarget(argv: string[]): RestTarget {
  let address = process.env.SLUICE_JOBMANAGER ?? '127.0.0.1:8081';
  let token = process.env.SLUICE_REST_TOKEN;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--jobmanager' || a === '-m') {
      const v = argv[i + 1];
      if (v === undefined) throw new CliError(`${a} needs host:port`, 2);
      address = v;
      argv.splice(i, 2);
      i--;
    } else if (a === '--token') {
      const v = argv[i + 1];
      if (v === undefined) throw new CliError('--token needs a value', 2);
      token = v;
      argv.splice(i, 2);
      i--;
    }
  }
  const baseUrl = /^https?:\/\//.test(address) ? address.replace(/\/+$/, '') : `http://${address}`;
  return { baseUrl, token };
}

export async function rest<T>(target: RestTarget, method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    throw new CliError(`cannot reach the Sluice REST API at ${target.baseUrl} (${(e as Error).message}); is the job running? give its address with --jobmanager host:port`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new CliError(`${method} ${path}: the server answered ${res.status} with a body that is not JSON`);
  }
  if (!res.ok) {
    const errors = (json as { errors?: string[] }).errors ?? [text];
    throw new CliError(`${method} ${path}: ${res.status} ${errors.join('; ')}`);
  }
  return json as T;
}

export function requireJobId(argv: readonly string[], usage: string): string {
  const id = argv.find((a) => !a.startsWith('-'));
  if (id === undefined) throw new CliError(`no job id given\n${usage}`, 2);
  if (!/^[0-9a-f]{32}$/.test(id)) throw new CliError(`'${id}' is not a job id (32 hex characters, as printed by sluice run and sluice list)`, 2);
  return id;
}

/** After a command consumed its flags: anything else starting with '-' is an error. */
export function rejectUnknownOptions(argv: readonly string[], usage: string): void {
  const unknown = argv.find((a) => a.startsWith('-'));
  if (unknown !== undefined) throw new CliError(`unknown option '${unknown}'\n${usage}`, 2);
}

/**
 * A path sent to a REST server, which resolves it in its own working directory: a relative
 * path of this shell becomes absolute; a URI (`s3://...`, `file://...`) goes as it is.
 */
export function pathForServer(path: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(path) ? path : resolvePath(path);
}
