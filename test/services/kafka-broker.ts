import { ensureMavenLibs } from './maven-libs.js';
import { freePort } from './free-port.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real single-node Apache Kafka broker (KRaft, combined broker and controller) for the tests,
 * run from the Maven Central jars that `test/services/kafka/pom.xml` collects. The jars are
 * downloaded once into `.cache/kafka/` (keyed by the pom's hash) and reused between runs.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const POM = join(REPO_ROOT, 'test/services/kafka/pom.xml');
const CACHE_DIR = join(REPO_ROOT, '.cache/kafka');
const READY_LINE = 'Kafka Server started';
const OUTPUT_TAIL_CHARS = 8_000;

export interface KafkaBrokerOptions {
  /** The broker's transaction protocol (`transaction.version` feature set at format time); Kafka 4.x defaults to 2. */
  readonly transactionVersion?: 1 | 2;
  /** Extra `server.properties` entries, overriding the defaults below. */
  readonly config?: Readonly<Record<string, string | number>>;
  readonly startTimeoutMs?: number;
}

export interface KafkaBroker {
  /** `host:port` of the PLAINTEXT listener. */
  readonly bootstrap: string;
  readonly transactionVersion: 1 | 2;
  /** The broker's `transaction.max.timeout.ms`. */
  readonly transactionMaxTimeoutMs: number;
  /** The broker's recent output (for error messages). */
  outputTail(): string;
  /** SIGTERM, SIGKILL after a grace period, then removes the data directory. */
  stop(): Promise<void>;
}

/** The broker's `transaction.max.timeout.ms` in tests: one hour, so tests can use long transaction timeouts. */
export const TEST_TRANSACTION_MAX_TIMEOUT_MS = 3_600_000;

/** Checks that `java` (17+) is there; throws naming what to install. */
function checkJava(): void {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) {
    throw new Error(
      'Kafka tests start a real Kafka broker, which needs a Java runtime (17 or newer) on PATH: install one ' +
        '(Debian: `apt-get install openjdk-17-jre-headless`), or set KAFKA_BOOTSTRAP=host:port to use a running broker.',
    );
  }
  const m = /version "(\d+)/.exec(r.stderr + r.stdout);
  const major = m === null ? 0 : Number(m[1]);
  if (major < 17) throw new Error(`Kafka 4.x needs Java 17 or newer; \`java -version\` says: ${(r.stderr + r.stdout).split('\n')[0]}`);
}

/**
 * The folder of the broker's jars: `.cache/kafka/libs-<pom hash>`, downloaded with Maven on
 * first use (into a temporary folder renamed when complete, so an interrupted or concurrent
 * download never leaves a half-filled cache).
 */
export function ensureKafkaLibs(): string {
  return ensureMavenLibs({
    pom: POM,
    cacheDir: CACHE_DIR,
    what: "the Kafka broker's jars",
    mainJar: /^kafka_2\.13-.*\.jar$/,
    withoutMaven:
      'Kafka tests download the broker from Maven Central with Maven on first use, and `mvn` was not found: install it ' +
      '(Debian: `apt-get install maven`), or set KAFKA_BOOTSTRAP=host:port to use a running broker.',
  });
}

/**
 * Reads a topic from the beginning with Kafka's own Java console consumer (an independent
 * reference reader), one value per line, until no record came for `idleMs` (default 4 s, counted
 * from the consumer's start: a JVM and a group join under load take a while).
 */
export function readTopicWithJavaConsumer(
  bootstrap: string,
  topic: string,
  o: { readonly isolation?: 'read_committed' | 'read_uncommitted'; readonly idleMs?: number; readonly printKey?: boolean } = {},
): Promise<string[]> {
  const libs = ensureKafkaLibs();
  const log4j = join(CACHE_DIR, 'log4j2-quiet.properties');
  if (!existsSync(log4j)) writeFileSync(log4j, 'rootLogger.level=ERROR\nrootLogger.appenderRef.stderr.ref=STDERR\nappender.stderr.type=Console\nappender.stderr.name=STDERR\nappender.stderr.target=SYSTEM_ERR\nappender.stderr.layout.type=PatternLayout\nappender.stderr.layout.pattern=%p %m%n\n');
  const args = [
    ...JVM_OPTIONS,
    `-Dlog4j2.configurationFile=${log4j}`,
    '-cp',
    join(libs, '*'),
    'org.apache.kafka.tools.consumer.ConsoleConsumer',
    '--bootstrap-server',
    bootstrap,
    '--topic',
    topic,
    '--from-beginning',
    '--isolation-level',
    o.isolation ?? 'read_committed',
    '--timeout-ms',
    String(o.idleMs ?? 4000),
    '--formatter-property',
    `print.key=${o.printKey === true}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      // The console consumer exits with 1 after its idle timeout; anything else on stderr is an error.
      const problems = err.split('\n').filter((l) => l.trim() !== '' && !/Processed a total of|TimeoutException|^\s+at |Error processing message, terminating consumer process/.test(l));
      if (problems.length > 0 && code !== 0) return reject(new Error(`console consumer of '${topic}' failed (exit ${code}):\n${err.slice(-3000)}`));
      const lines = out.split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      resolve(lines);
    });
  });
}


/** A Kafka cluster id: 16 random bytes in URL-safe base64 without padding, not starting with '-'. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function serverProperties(dir: string, brokerPort: number, controllerPort: number, extra: Readonly<Record<string, string | number>>): string {
  const props: Record<string, string | number> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${brokerPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${brokerPort}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': join(dir, 'data'),
    'num.partitions': 1,
    'offsets.topic.replication.factor': 1,
    'offsets.topic.num.partitions': 4,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'transaction.state.log.num.partitions': 4,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    'transaction.max.timeout.ms': TEST_TRANSACTION_MAX_TIMEOUT_MS,
    'group.initial.rebalance.delay.ms': 0,
    'auto.create.topics.enable': 'false',
    ...extra,
  };
  return Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n';
}

const LOG4J2 = `rootLogger.level=WARN
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
logger.server.name=kafka.server.KafkaRaftServer
logger.server.level=INFO
`;

/** JVM options for a small, quick-starting test broker (C1 only: starts faster, plenty for tests). */
const JVM_OPTIONS = ['-Xms128m', '-Xmx768m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:-UsePerfData', '-Djava.awt.headless=true'];

/**
 * Runs java under a small shell that kills it when the parent (this Node process) is gone, so a
 * test run that is killed leaves no broker behind. The shell and java share a process group,
 * which `stop` signals.
 */
const WATCHDOG = `
java "$@" &
child=$!
trap 'kill -TERM $child 2>/dev/null' TERM INT
while kill -0 $child 2>/dev/null; do
  if ! kill -0 "$SLUICE_PARENT_PID" 2>/dev/null; then
    kill -TERM $child 2>/dev/null; sleep 5; kill -KILL $child 2>/dev/null; exit 1
  fi
  sleep 1
done
wait $child
`;

/** Formats a fresh KRaft log directory and starts a broker on free loopback ports; resolves once it serves. */
export async function startKafkaBroker(o: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  checkJava();
  const libs = ensureKafkaLibs();
  const transactionVersion = o.transactionVersion ?? 2;
  let lastError: Error | undefined;
  // A port taken between choosing and binding it makes the broker exit: try new ports.
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-kafka-'));
    try {
      return await startOnce(dir, libs, transactionVersion, o);
    } catch (e) {
      lastError = e as Error;
      rmSync(dir, { recursive: true, force: true });
      if (!(e instanceof BrokerExitedEarly)) throw e;
    }
  }
  throw lastError!;
}

class BrokerExitedEarly extends Error {}

async function startOnce(dir: string, libs: string, transactionVersion: 1 | 2, o: KafkaBrokerOptions): Promise<KafkaBroker> {
  const brokerPort = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === brokerPort) controllerPort = await freePort();
  const config = { ...(o.config ?? {}) };
  const propsFile = join(dir, 'server.properties');
  writeFileSync(propsFile, serverProperties(dir, brokerPort, controllerPort, config));
  writeFileSync(join(dir, 'log4j2.properties'), LOG4J2);
  const classpath = join(libs, '*');
  const format = spawnSync(
    'java',
    [...JVM_OPTIONS, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', propsFile, '--feature', `transaction.version=${transactionVersion}`],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (format.status !== 0) throw new Error(`formatting the Kafka log directory failed (exit ${format.status ?? format.signal}):\n${(format.stdout + format.stderr).slice(-4000)}`);

  const child = spawn('bash', ['-c', WATCHDOG, 'kafka-broker', ...JVM_OPTIONS, `-Dlog4j2.configurationFile=${join(dir, 'log4j2.properties')}`, '-cp', classpath, 'kafka.Kafka', propsFile], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SLUICE_PARENT_PID: String(process.pid) },
  });
  let output = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const ready = new Promise<void>((resolve) => {
    const onData = (b: Buffer): void => {
      output = (output + b.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
      if (output.includes(READY_LINE)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
  const timeoutMs = o.startTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const outcome = await Promise.race([ready.then(() => 'ready' as const), exited.then((c) => ({ exit: c })), timedOut]);
  clearTimeout(timer);
  const stop = (): Promise<void> => stopBroker(child, exited, dir);
  if (outcome !== 'ready') {
    await stop();
    if (outcome === 'timeout') throw new Error(`the Kafka broker did not start within ${timeoutMs} ms; its output:\n${output}`);
    const portTaken = /Address already in use|BindException/.test(output);
    const err = `the Kafka broker exited (${outcome.exit}) before it served; its output:\n${output}`;
    throw portTaken ? new BrokerExitedEarly(err) : new Error(err);
  }
  // The ready line is printed when the listeners are bound; keep draining output so the pipe never fills.
  return {
    bootstrap: `127.0.0.1:${brokerPort}`,
    transactionVersion,
    transactionMaxTimeoutMs: Number(config['transaction.max.timeout.ms'] ?? TEST_TRANSACTION_MAX_TIMEOUT_MS),
    outputTail: () => output,
    stop,
  };
}

async function stopBroker(child: ChildProcess, exited: Promise<unknown>, dir: string): Promise<void> {
  const pgid = child.pid;
  const signalGroup = (signal: NodeJS.Signals): void => {
    if (pgid === undefined) return;
    try {
      process.kill(-pgid, signal);
    } catch {
      // Already gone.
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    signalGroup('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), 5_000);
    });
    const r = await Promise.race([exited, grace]);
    clearTimeout(timer);
    if (r === 'grace') {
      signalGroup('SIGKILL');
      await exited;
    }
  }
  // The shell may have exited while java still winds down: make sure the group is gone.
  signalGroup('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
