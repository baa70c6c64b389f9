import { resolve as resolvePath } from 'node:path';
import { CliError, commandConfiguration } from './cli-error.js';

export interface RestTarget {
  readonly baseUrl: string;
  readonly token: string | undefined;
}

/** `--jobmanager host:port` (default 127.0.0.1:8081) and `--token`, removed from argv. */
export function parseTarget(argv: string[]): RestTarget {
  // Flag, then environment, then the configuration file's rest.*, then Flink's default.
  const file = commandConfiguration();
  const fileHost = file.has('rest.address') ? file.getString('rest.address')!.replace(/^(0\.0\.0\.0|::)$/, '127.0.0.1') : '127.0.0.1';
  const fileAddress = file.has('rest.address') || file.has('rest.port') ? `${fileHost.includes(':') ? `[${fileHost}]` : fileHost}:${file.getNumber('rest.port')}` : undefined;
  let address = process.env.SLUICE_JOBMANAGER ?? fileAddress ?? '127.0.0.1:8081';
  let token = process.env.SLUICE_REST_TOKEN ?? file.getString('rest.auth.token');
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
  checkAddress(address, baseUrl);
  return { baseUrl, token };
}

/** The REST address a job command was given (-m, SLUICE_JOBMANAGER, the file): host:port with a port in range, or an http(s) URL. */
function checkAddress(address: string, baseUrl: string): void {
  const fix = "give the REST API's host:port, e.g. -m 127.0.0.1:8081 (or SLUICE_JOBMANAGER)";
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new CliError(`'${address}' is not host:port; ${fix}`, 2);
  }
  if (url.port === '' && !/^https?:\/\//.test(address)) throw new CliError(`'${address}' has no port; ${fix}`, 2);
  if (url.hostname === '' || (url.pathname !== '/' && url.pathname !== '')) throw new CliError(`'${address}' is not host:port; ${fix}`, 2);
}

/** How long one REST request may take before the CLI gives up on it (the server is stuck or is not Sluice's). */
export const REST_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The JSON type of a response's field: 'array' and 'object' of any content; a shape, an
 * object with those fields; `[type]`, an array whose every element is of that type.
 */
export type FieldType = 'string' | 'number' | 'boolean' | 'object' | 'array' | ResponseShape | readonly [FieldType];

/** Fields a response must have, with their JSON types. */
export interface ResponseShape {
  readonly [field: string]: FieldType;
}

function jsonType(v: unknown): string {
  return v === undefined ? 'missing' : Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
}

const withArticle = (type: string): string => `${type === 'array' || type === 'object' ? 'an' : 'a'} ${type}`;

/** What is wrong with the value `v` of the field `name` for `type`, or undefined when it fits. */
function fieldProblem(v: unknown, type: FieldType, name: string): string | undefined {
  const expected = typeof type === 'string' ? type : Array.isArray(type) ? 'array' : 'object';
  const actual = jsonType(v);
  if (actual !== expected) return `'${name}' is ${actual === 'missing' ? 'missing' : withArticle(actual)}, not ${withArticle(expected)}`;
  if (typeof type === 'string') return undefined;
  if (Array.isArray(type)) {
    const element = (type as readonly [FieldType])[0];
    for (const [k, e] of (v as unknown[]).entries()) {
      const problem = fieldProblem(e, element, `${name}[${k}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  for (const [field, t] of Object.entries(type as ResponseShape)) {
    const problem = fieldProblem((v as Record<string, unknown>)[field], t, `${name}.${field}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** What is wrong with `json` for `shape` (the first field missing or of another type, at any depth), or undefined when it fits. */
export function shapeProblem(json: unknown, shape: ResponseShape): string | undefined {
  if (jsonType(json) !== 'object') return `it is not a JSON object`;
  for (const [field, type] of Object.entries(shape)) {
    const problem = fieldProblem((json as Record<string, unknown>)[field], type, field);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * One request to the REST API. A response that is not JSON, an error status, no answer within
 * REST_REQUEST_TIMEOUT_MS, or (with `shape`) a body without the expected fields is a CliError
 * naming the address: the target may not be a Sluice JobManager at all.
 */
export async function rest<T>(target: RestTarget, method: string, path: string, body?: unknown, shape?: ResponseShape, timeoutMs = REST_REQUEST_TIMEOUT_MS): Promise<T> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${target.baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await res.text();
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') {
      throw new CliError(`${method} ${path}: the REST API at ${target.baseUrl} did not answer within ${timeoutMs / 1000} s; is it a Sluice JobManager? give its address with --jobmanager host:port`);
    }
    throw new CliError(`cannot reach the Sluice REST API at ${target.baseUrl} (${(e as Error).message}); is the job running? give its address with --jobmanager host:port`);
  }
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new CliError(`${method} ${path}: the server at ${target.baseUrl} answered ${res.status} with a body that is not JSON; is it a Sluice JobManager? give its address with --jobmanager host:port`);
  }
  if (!res.ok) {
    const errors = (json as { errors?: unknown }).errors;
    throw new CliError(`${method} ${path}: ${res.status} ${Array.isArray(errors) ? errors.map(String).join('; ') : text}`);
  }
  const problem = shape === undefined ? undefined : shapeProblem(json, shape);
  if (problem !== undefined) throw unexpectedAnswer(target, method, path, problem);
  return json as T;
}

/** The error for an answer that is JSON but not what a Sluice (or Flink) JobManager sends: `problem` says what is wrong with it. */
export function unexpectedAnswer(target: RestTarget, method: string, path: string, problem: string): CliError {
  return new CliError(`${method} ${path}: the answer of ${target.baseUrl} is not what a Sluice JobManager sends (${problem}); is --jobmanager the right address, and the server the same version as this CLI?`);
}

/**
 * The job id, the first argument not starting with '-'. More such arguments than `alsoAllowed`
 * after it are an error (`sluice cancel <id> <dir>` must not cancel without the savepoint).
 */
export function requireJobId(argv: readonly string[], usage: string, alsoAllowed = 0): string {
  const positional = argv.filter((a) => !a.startsWith('-'));
  const id = positional[0];
  if (id === undefined) throw new CliError(`no job id given\n${usage}`, 2);
  if (!/^[0-9a-f]{32}$/.test(id)) throw new CliError(`'${id}' is not a job id (32 hex characters, as printed by sluice run and sluice list)`, 2);
  const extra = positional.slice(1 + alsoAllowed);
  if (extra.length > 0) throw new CliError(`unexpected argument${extra.length > 1 ? 's' : ''} after the job id: ${extra.join(' ')}\n${usage}`, 2);
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
