import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Configuration, ConfigError } from '../config/configuration.js';
import { JobManager } from '../cluster/job-manager.js';
import { LocalCluster, sluiceBin } from '../cluster/local-cluster.js';
import { TaskManager } from '../cluster/task-manager.js';
import { CLUSTER_SECRET_ENV } from '../cluster/task-manager-environment.js';
import { isZooKeeperHa, quorumOfUrl, zooKeeperHaConfig } from '../cluster/ha/zookeeper-ha-config.js';
import { CliError, commandConfiguration } from './cli-error.js';
import { applyLogging, LOG_FLAGS, LOG_USAGE, setLogFlag } from './log-options.js';
import { markTaskManagerProcess } from '../util/this-process.js';

export const JOBMANAGER_USAGE = `usage: sluice jobmanager [--rpc-port P] [--rest-port P] [--rest-address A] ${LOG_USAGE} [-D key=value]...`;
export const TASKMANAGER_USAGE = `usage: sluice taskmanager --jobmanager host:port|zookeeper://host:port,... [--slots N] [--id ID] [--quiet] ${LOG_USAGE} [-D key=value]...`;
export const CLUSTER_USAGE = `usage: sluice cluster start|stop|run [--taskmanagers N] [--slots N] [--rpc-port P] [--rest-port P] [--rest-address A] ${LOG_USAGE} [-D key=value]...`;

interface ParsedFlags {
  readonly config: Configuration;
  readonly flags: Map<string, string>;
  readonly positional: string[];
}

/**
 * `-D key=value` into a configuration, `--name value` flags (only those listed, and the
 * logging flags, which set their keys), positional arguments.
 */
function parseFlags(argv: readonly string[], valued: readonly string[], usage: string): ParsedFlags {
  const config = commandConfiguration();
  const secret = process.env[CLUSTER_SECRET_ENV];
  if (secret !== undefined && secret !== '') config.set('cluster.secret', secret);
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-D' || a.startsWith('-D')) {
      const assignment = a === '-D' ? argv[++i] : a.slice(2);
      if (assignment === undefined) throw new CliError(`-D needs key=value\n${usage}`, 2);
      try {
        config.setFromString(assignment);
      } catch (e) {
        if (e instanceof ConfigError) throw new CliError(e.message, 2);
        throw e;
      }
    } else if (a === '--help' || a === '-h') {
      throw new CliError(usage, 0);
    } else if (a.startsWith('--')) {
      const [name, inline] = a.slice(2).split('=', 2) as [string, string | undefined];
      if (LOG_FLAGS[`--${name}`] !== undefined) {
        setLogFlag(config, `--${name}`, inline ?? argv[++i], usage);
        continue;
      }
      if (!valued.includes(name)) throw new CliError(`unknown option '${a}'\n${usage}`, 2);
      const value = inline ?? argv[++i];
      if (value === undefined) throw new CliError(`--${name} needs a value\n${usage}`, 2);
      flags.set(name, value);
    } else positional.push(a);
  }
  applyLogging(config);
  return { config, flags, positional };
}

function intFlag(flags: Map<string, string>, name: string, min: number, usage: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = flags.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new CliError(`--${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`}, got '${v}'\n${usage}`, 2);
  }
  return Number(v);
}

const MAX_PORT = 65535;

function hostPort(text: string, usage: string): { host: string; port: number } {
  const m = /^(.+):(\d+)$/.exec(text);
  if (m === null) throw new CliError(`'${text}' is not host:port\n${usage}`, 2);
  if (Number(m[2]) < 1 || Number(m[2]) > MAX_PORT) throw new CliError(`'${text}': the port must be in [1, ${MAX_PORT}]\n${usage}`, 2);
  return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

/** Resolves when the process gets SIGINT or SIGTERM. */
function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

function applyServerFlags(p: ParsedFlags, usage: string): Configuration {
  const c = p.config;
  const rpc = intFlag(p.flags, 'rpc-port', 0, usage, MAX_PORT);
  if (rpc !== undefined) c.set('jobmanager.rpc.port', rpc);
  const restPort = intFlag(p.flags, 'rest-port', 0, usage, MAX_PORT);
  if (restPort !== undefined) c.set('rest.port', restPort);
  const restAddress = p.flags.get('rest-address');
  if (restAddress !== undefined) c.set('rest.address', restAddress);
  return c;
}

/** `sluice jobmanager`: runs a JobManager until SIGINT/SIGTERM. */
export async function jobManagerCommand(argv: readonly string[]): Promise<number> {
  const p = parseFlags(argv, ['rpc-port', 'rest-port', 'rest-address'], JOBMANAGER_USAGE);
  if (p.positional.length > 0) throw new CliError(`unexpected argument '${p.positional[0]}'\n${JOBMANAGER_USAGE}`, 2);
  const jm = new JobManager({ config: applyServerFlags(p, JOBMANAGER_USAGE) });
  try {
    await jm.start();
  } catch (e) {
    throw new CliError(`the JobManager cannot start: ${(e as Error).message}`);
  }
  process.stdout.write(`JobManager ready: TaskManagers connect to ${p.config.getString('jobmanager.rpc.address')}:${jm.rpcPort}; REST API at ${jm.restUrl}\n`);
  await untilSignal();
  await jm.stop();
  return 0;
}

/** `sluice taskmanager`: runs a TaskManager until SIGINT/SIGTERM. */
export async function taskManagerCommand(argv: readonly string[]): Promise<number> {
  const quiet = argv.includes('--quiet');
  const p = parseFlags(argv.filter((a) => a !== '--quiet'), ['jobmanager', 'slots', 'id'], TASKMANAGER_USAGE);
  const target = p.flags.get('jobmanager') ?? process.env.SLUICE_JOBMANAGER_RPC;
  // High availability: the leader is found in ZooKeeper (--jobmanager zookeeper://quorum, or the configuration's quorum).
  const quorum = target === undefined ? undefined : quorumOfUrl(target);
  const leaderRetrieval = quorum !== undefined || (target === undefined && isZooKeeperHa(p.config)) ? zooKeeperHaConfig(p.config, quorum) : undefined;
  if (target === undefined && leaderRetrieval === undefined) {
    throw new CliError(`--jobmanager host:port is required (the JobManager's rpc port, 6123 by default), or zookeeper://host:port,... with high availability\n${TASKMANAGER_USAGE}`, 2);
  }
  const { host, port } = leaderRetrieval !== undefined ? { host: '', port: 0 } : hostPort(target!, TASKMANAGER_USAGE);
  const slots = intFlag(p.flags, 'slots', 1, TASKMANAGER_USAGE) ?? p.config.getNumber('taskmanager.numberOfTaskSlots');
  const id = p.flags.get('id');
  const tmHost = p.config.getString('taskmanager.host') ?? '127.0.0.1';
  const tm = new TaskManager({
    jobManagerHost: host,
    jobManagerPort: port,
    slots,
    host: tmHost,
    dataPort: p.config.getNumber('taskmanager.data.port'),
    metricsPort: p.config.getNumber('metrics.reporter.prom.port'),
    secret: p.config.getString('cluster.secret'),
    cancellationTimeoutMs: p.config.getNumber('task.cancellation.timeout'),
    onFatalError: () => process.exit(1),
    ...(leaderRetrieval === undefined ? {} : { leaderRetrieval }),
    ...(id === undefined ? {} : { id }),
    ...(quiet ? { quiet: true } : {}),
  });
  // What this process's connectors say when what they read from its environment is refused.
  markTaskManagerProcess(tm.id);
  try {
    await tm.start();
  } catch (e) {
    await tm.stop().catch(() => undefined);
    const { code, syscall } = e as NodeJS.ErrnoException;
    const giveAddress = 'give a host name or IP address of this machine with -D taskmanager.host=<address>';
    if (syscall === 'getaddrinfo') throw new CliError(`the TaskManager cannot start: its address '${tmHost}' (taskmanager.host) cannot be resolved (${code}); ${giveAddress}`);
    if (code === 'EADDRNOTAVAIL') throw new CliError(`the TaskManager cannot start: its address ${tmHost} (taskmanager.host) is not one of this machine's; ${giveAddress}`);
    throw new CliError(`the TaskManager cannot start: ${(e as Error).message}`);
  }
  // A TaskManager of a local cluster goes when the cluster process does (even if it was killed).
  const parent = Number(process.env.SLUICE_PARENT_PID ?? NaN);
  let orphaned: (() => void) | undefined;
  const watch = Number.isInteger(parent)
    ? setInterval(() => {
        if (!isAlive(parent)) orphaned?.();
      }, 1000)
    : undefined;
  await Promise.race([untilSignal(), new Promise<void>((resolve) => (orphaned = resolve))]);
  clearInterval(watch);
  await tm.stop();
  return 0;
}

/** Where `sluice cluster start` keeps the state of the background cluster. */
function clusterStateDir(): string {
  return process.env.SLUICE_CLUSTER_DIR ?? join(tmpdir(), `sluice-cluster-${userInfo().username}`);
}

interface ClusterState {
  readonly pid: number;
  readonly rpc: string;
  readonly rest: string;
  readonly log: string;
}

/** `sluice cluster start|stop|run`: a standalone cluster on this machine. */
export async function clusterCommand(argv: readonly string[]): Promise<number> {
  const [action, ...rest] = argv;
  const p = parseFlags(rest, ['taskmanagers', 'slots', 'rpc-port', 'rest-port', 'rest-address'], CLUSTER_USAGE);
  const stateDir = clusterStateDir();
  const stateFile = join(stateDir, 'cluster.json');
  switch (action) {
    case 'run': {
      const config = applyServerFlags(p, CLUSTER_USAGE);
      const cluster = new LocalCluster({
        config,
        taskManagers: intFlag(p.flags, 'taskmanagers', 1, CLUSTER_USAGE) ?? availableParallelism(),
        slotsPerTaskManager: intFlag(p.flags, 'slots', 1, CLUSTER_USAGE) ?? config.getNumber('taskmanager.numberOfTaskSlots'),
      });
      try {
        await cluster.start();
      } catch (e) {
        await cluster.stop();
        throw new CliError(`the cluster cannot start: ${(e as Error).message}`);
      }
      process.stdout.write(`cluster ready: rpc 127.0.0.1:${cluster.jobManager.rpcPort} rest ${cluster.jobManager.restUrl} taskmanagers ${cluster.taskManagers.length}\n`);
      await untilSignal();
      await cluster.stop();
      return 0;
    }
    case 'start': {
      if (existsSync(stateFile)) {
        const s = JSON.parse(readFileSync(stateFile, 'utf8')) as ClusterState;
        if (isAlive(s.pid)) throw new CliError(`a cluster is already running (pid ${s.pid}, REST API at ${s.rest}); stop it with: sluice cluster stop`);
      }
      mkdirSync(stateDir, { recursive: true });
      const log = join(stateDir, 'cluster.log');
      const out = openSync(log, 'w');
      const child = spawn(process.execPath, [sluiceBin(), 'cluster', 'run', ...rest], { detached: true, stdio: ['ignore', out, out] });
      child.unref();
      const ready = await waitForLine(log, /cluster ready: rpc (\S+) rest (\S+)/, 60_000, child.pid!);
      const state: ClusterState = { pid: child.pid!, rpc: ready[1]!, rest: ready[2]!, log };
      writeFileSync(stateFile, JSON.stringify(state));
      process.stdout.write(`Cluster started (pid ${state.pid}): REST API at ${state.rest}, TaskManagers connect to ${state.rpc}; log: ${log}\n`);
      process.stdout.write(`Submit jobs with: sluice run --jobmanager ${state.rest.replace(/^https?:\/\//, '')} <job.ts>\n`);
      return 0;
    }
    case 'stop': {
      if (!existsSync(stateFile)) throw new CliError(`no cluster started by sluice cluster start is known (${stateFile} does not exist)`);
      const s = JSON.parse(readFileSync(stateFile, 'utf8')) as ClusterState;
      if (isAlive(s.pid)) {
        process.kill(s.pid, 'SIGTERM');
        const deadline = Date.now() + 15_000;
        while (isAlive(s.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        if (isAlive(s.pid)) process.kill(s.pid, 'SIGKILL');
      }
      rmSync(stateFile, { force: true });
      process.stdout.write(`Cluster stopped (pid ${s.pid}).\n`);
      return 0;
    }
    default:
      throw new CliError(CLUSTER_USAGE, 2);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForLine(file: string, pattern: RegExp, timeoutMs: number, pid: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const m = pattern.exec(text);
    if (m !== null) return m;
    if (!isAlive(pid)) throw new CliError(`the cluster exited while starting; see ${file}:\n${text.split('\n').slice(-15).join('\n')}`);
    if (Date.now() > deadline) throw new CliError(`the cluster did not start within ${timeoutMs} ms; see ${file}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
