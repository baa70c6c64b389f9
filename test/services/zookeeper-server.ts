import { ensureMavenLibs } from './maven-libs.js';
import { freePort } from './free-port.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real Apache ZooKeeper for the tests: a standalone server, or an ensemble of servers on this
 * machine, run from the Maven Central jars that `test/services/zookeeper/pom.xml` collects
 * (org.apache.zookeeper:zookeeper and its runtime dependencies). The jars are downloaded once
 * into `.cache/zookeeper/` (keyed by the pom's hash) and reused between runs. Each server
 * listens on free loopback ports, keeps its data in a temporary directory, and can be stopped
 * (SIGTERM), killed (SIGKILL) and started again on the same data.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POM = join(REPO_ROOT, 'test/services/zookeeper/pom.xml');
const CACHE_DIR = join(REPO_ROOT, '.cache/zookeeper');
const OUTPUT_TAIL_CHARS = 8_000;

/** JVM options for a small, quick-starting test server (C1 only: starts faster, plenty for tests). */
const JVM_OPTIONS = ['-Xms32m', '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:-UsePerfData', '-Djava.awt.headless=true', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-Dzookeeper.admin.enableServer=false'];

/**
 * Runs java under a small shell that kills it when the parent (this Node process) is gone, so a
 * test run that is killed leaves no server behind. The shell and java share a process group,
 * which `stop` and `kill` signal.
 */
const WATCHDOG = `
java "$@" &
child=$!
trap 'kill -TERM $child 2>/dev/null' TERM INT
while kill -0 $child 2>/dev/null; do
  if ! kill -0 "$SLUICE_PARENT_PID" 2>/dev/null; then
    kill -KILL $child 2>/dev/null; exit 1
  fi
  sleep 1
done
wait $child
`;

export interface ZooKeeperServerOptions {
  /**
   * ZooKeeper's tickTime (default 500 ms). Sessions may last from `minSessionTimeoutMs` (default
   * 2 ticks) to `maxSessionTimeoutMs` (default 120 s, so Flink's 60 s default is granted as asked).
   */
  readonly tickTimeMs?: number;
  readonly minSessionTimeoutMs?: number;
  readonly maxSessionTimeoutMs?: number;
  readonly startTimeoutMs?: number;
}

/** One ZooKeeper server process (standalone, or one member of an ensemble). */
export interface ZooKeeperServer {
  /** `host:port` of its client port. */
  readonly connectString: string;
  readonly clientPort: number;
  /** Its data directory (kept across stop/kill and start). */
  readonly dataDir: string;
  /** Whether its process runs. */
  running(): boolean;
  /** Its recent output (for error messages). */
  outputTail(): string;
  /** Starts it again on the same data and ports (after stop or kill); resolves once it serves (an ensemble member: once it answers). */
  start(): Promise<void>;
  /** SIGTERM, SIGKILL after a grace period; the data directory stays. */
  stop(): Promise<void>;
  /** SIGKILL at once; the data directory stays. */
  kill(): Promise<void>;
  /** SIGSTOP: the server stops answering, its connections stay open (a hung or partitioned server). */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
}

/** A standalone server, or an ensemble: its members and the connect string naming them all. */
export interface ZooKeeperService {
  /** `host:port,host:port,...` of every member (what `high-availability.zookeeper.quorum` takes). */
  readonly connectString: string;
  readonly servers: readonly ZooKeeperServer[];
  /** Stops every member and removes their data directories. */
  close(): Promise<void>;
}

/** Checks that `java` (11+) is there; throws naming what to install. */
function checkJava(): void {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) {
    throw new Error(
      'high-availability tests start a real ZooKeeper server, which needs a Java runtime (11 or newer) on PATH: install one ' +
        '(Debian: `apt-get install openjdk-17-jre-headless`), or set ZOOKEEPER_QUORUM=host:port,... to use a running ZooKeeper.',
    );
  }
}

/**
 * The folder of the server's jars: `.cache/zookeeper/libs-<pom hash>`, downloaded with Maven on
 * first use (into a temporary folder renamed when complete, so an interrupted or concurrent
 * download never leaves a half-filled cache).
 */
export function ensureZooKeeperLibs(): string {
  return ensureMavenLibs({
    pom: POM,
    cacheDir: CACHE_DIR,
    what: "ZooKeeper's jars",
    mainJar: /^zookeeper-3\.\d+\.\d+\.jar$/,
    withoutMaven:
      'high-availability tests download ZooKeeper from Maven Central with Maven on first use, and `mvn` was not found: install it ' +
      '(Debian: `apt-get install maven`), or set ZOOKEEPER_QUORUM=host:port,... to use a running ZooKeeper.',
  });
}

/**
 * Sends a four-letter-word command (`srvr`, `ruok`, `mntr`) to a server's client port and
 * resolves with its answer ('' when it cannot be reached within `timeoutMs`).
 */
export function fourLetterWord(port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const socket = connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('connect', () => socket.write(word));
    socket.on('data', (b: Buffer) => (out += b.toString('utf8')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/** The server's mode from `srvr` (`standalone`, `leader`, `follower`), or undefined when it does not serve. */
export async function serverMode(port: number): Promise<string | undefined> {
  return /^Mode: (\S+)/m.exec(await fourLetterWord(port, 'srvr'))?.[1];
}

interface Member {
  readonly id: number;
  readonly clientPort: number;
  readonly quorumPort: number;
  readonly electionPort: number;
}

function zooCfg(dataDir: string, me: Member, members: readonly Member[], o: ZooKeeperServerOptions): string {
  const tickTimeMs = o.tickTimeMs ?? 500;
  const lines = [
    `tickTime=${tickTimeMs}`,
    `dataDir=${dataDir}`,
    `clientPort=${me.clientPort}`,
    'clientPortAddress=127.0.0.1',
    `minSessionTimeout=${o.minSessionTimeoutMs ?? 2 * tickTimeMs}`,
    `maxSessionTimeout=${o.maxSessionTimeoutMs ?? 120_000}`,
    'maxClientCnxns=0',
    'admin.enableServer=false',
    '4lw.commands.whitelist=srvr,ruok,mntr,cons,stat',
    'initLimit=20',
    'syncLimit=10',
    'autopurge.purgeInterval=0',
  ];
  if (members.length > 1) {
    for (const m of members) lines.push(`server.${m.id}=127.0.0.1:${m.quorumPort}:${m.electionPort}`);
  }
  return lines.join('\n') + '\n';
}

class ServerProcess implements ZooKeeperServer {
  readonly connectString: string;
  readonly clientPort: number;
  private child: ChildProcess | undefined;
  private exited: Promise<unknown> = Promise.resolve();
  private output = '';

  constructor(
    readonly dataDir: string,
    private readonly libs: string,
    private readonly cfgFile: string,
    private readonly standalone: boolean,
    private readonly startTimeoutMs: number,
    member: Member,
  ) {
    this.clientPort = member.clientPort;
    this.connectString = `127.0.0.1:${member.clientPort}`;
  }

  running(): boolean {
    const c = this.child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  outputTail(): string {
    return this.output;
  }

  /** Spawns the process; does not wait. */
  spawn(): void {
    if (this.running()) throw new Error(`ZooKeeper server on port ${this.clientPort} is running already`);
    const main = this.standalone ? 'org.apache.zookeeper.server.ZooKeeperServerMain' : 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
    const child = spawn('bash', ['-c', WATCHDOG, 'zookeeper-server', ...JVM_OPTIONS, '-cp', join(this.libs, '*'), main, this.cfgFile], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SLUICE_PARENT_PID: String(process.pid) },
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    const onData = (b: Buffer): void => {
      this.output = (this.output + b.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  }

  /** Resolves once the server answers `srvr` with a mode (`serving`) or at all; throws if it exits or times out. */
  async waitUntil(what: 'serving' | 'answering'): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    for (;;) {
      if (!this.running()) throw new Error(`the ZooKeeper server on port ${this.clientPort} exited before it served; its output:\n${this.output}`);
      const answer = await fourLetterWord(this.clientPort, 'srvr', 1000);
      if (what === 'answering' ? answer !== '' : /^Mode: /m.test(answer)) return;
      if (Date.now() > deadline) throw new Error(`the ZooKeeper server on port ${this.clientPort} did not serve within ${this.startTimeoutMs} ms (srvr: ${JSON.stringify(answer)}); its output:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async start(): Promise<void> {
    this.spawn();
    await this.waitUntil(this.standalone ? 'serving' : 'answering');
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pgid = this.child?.pid;
    if (pgid === undefined) return;
    try {
      process.kill(-pgid, signal);
    } catch {
      // Already gone.
    }
  }

  async stop(): Promise<void> {
    if (this.running()) {
      this.signalGroup('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<'grace'>((resolve) => (timer = setTimeout(() => resolve('grace'), 5_000)));
      const r = await Promise.race([this.exited, grace]);
      clearTimeout(timer);
      if (r === 'grace') this.signalGroup('SIGKILL');
    }
    this.signalGroup('SIGKILL');
    await this.exited;
  }

  async kill(): Promise<void> {
    this.signalGroup('SIGKILL');
    await this.exited;
  }

  freeze(): void {
    this.signalGroup('SIGSTOP');
  }

  thaw(): void {
    this.signalGroup('SIGCONT');
  }
}

/** Starts a standalone ZooKeeper server on a free loopback port with a fresh data directory; resolves once it serves. */
export async function startZooKeeperServer(o: ZooKeeperServerOptions = {}): Promise<ZooKeeperService> {
  return startZooKeeperEnsemble(1, o);
}

/**
 * Starts an ensemble of `size` ZooKeeper servers on this machine (free loopback ports, a fresh
 * data directory each; `size` 1: a standalone server); resolves once every member serves, one
 * as leader.
 */
export async function startZooKeeperEnsemble(size: number, o: ZooKeeperServerOptions = {}): Promise<ZooKeeperService> {
  if (!Number.isInteger(size) || size < 1) throw new Error(`a ZooKeeper ensemble has 1 or more servers, not ${size}`);
  checkJava();
  const libs = ensureZooKeeperLibs();
  const root = mkdtempSync(join(tmpdir(), 'sluice-zk-'));
  const taken = new Set<number>();
  const members: Member[] = [];
  for (let id = 1; id <= size; id++) {
    const ports = [];
    for (let i = 0; i < 3; i++) {
      const p = await freePort(taken);
      taken.add(p);
      ports.push(p);
    }
    members.push({ id, clientPort: ports[0]!, quorumPort: ports[1]!, electionPort: ports[2]! });
  }
  const servers = members.map((m) => {
    const dataDir = join(root, `server-${m.id}`);
    mkdirSync(dataDir, { recursive: true });
    if (size > 1) writeFileSync(join(dataDir, 'myid'), `${m.id}\n`);
    const cfgFile = join(root, `zoo-${m.id}.cfg`);
    writeFileSync(cfgFile, zooCfg(dataDir, m, members, o));
    return new ServerProcess(dataDir, libs, cfgFile, size === 1, o.startTimeoutMs ?? 60_000, m);
  });
  const close = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (const s of servers) s.spawn();
    await Promise.all(servers.map((s) => s.waitUntil('serving')));
  } catch (e) {
    await close();
    throw e;
  }
  return { connectString: servers.map((s) => s.connectString).join(','), servers, close };
}
