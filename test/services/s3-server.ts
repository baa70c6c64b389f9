import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real S3-compatible server on loopback for the tests: s3rver (npm), which keeps objects
 * in a temp directory and speaks the S3 REST API (signed requests, multipart uploads,
 * ListObjectsV2). Started on a free port; its credentials are s3rver's fixed S3RVER/S3RVER.
 */

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

export interface S3TestServer {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  readonly buckets: readonly string[];
  /** The s3.* settings that reach it, as given to Configuration / StreamExecutionEnvironment.create. */
  readonly config: Readonly<Record<string, string | boolean>>;
  close(): Promise<void>;
}

export async function startS3Server(buckets: readonly string[] = ['sluice']): Promise<S3TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'sluice-s3rver-'));
  const specifier: string = 's3rver';
  const S3rver = ((await import(specifier)) as { default: S3rverConstructor }).default;
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    buckets,
    config: { 's3.endpoint': endpoint, 's3.access-key': 'S3RVER', 's3.secret-key': 'S3RVER', 's3.region': 'us-east-1', 's3.path.style.access': true },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * S3Proxy (Maven Central, org.gaul:s3proxy, jar with dependencies) on loopback, in-memory
 * (jclouds transient) and, unlike s3rver, verifying AWS Signature V4 of every request. Needs
 * `java` (17+); the jar is downloaded once into `.cache/s3proxy/` and checked against Maven
 * Central's SHA-1.
 */
const S3PROXY_VERSION = '2.6.0';
const S3PROXY_JAR_URL = `https://repo1.maven.org/maven2/org/gaul/s3proxy/${S3PROXY_VERSION}/s3proxy-${S3PROXY_VERSION}-jar-with-dependencies.jar`;

export function javaAvailable(): boolean {
  return spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
}

async function s3ProxyJar(): Promise<string> {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.cache', 's3proxy');
  const jar = join(dir, `s3proxy-${S3PROXY_VERSION}.jar`);
  if (existsSync(jar)) return jar;
  mkdirSync(dir, { recursive: true });
  const [body, sha1] = await Promise.all([fetch(S3PROXY_JAR_URL), fetch(`${S3PROXY_JAR_URL}.sha1`)]);
  if (!body.ok || !sha1.ok) throw new Error(`downloading S3Proxy from ${S3PROXY_JAR_URL} failed: HTTP ${body.status}/${sha1.status}`);
  const bytes = new Uint8Array(await body.arrayBuffer());
  const expected = (await sha1.text()).trim().split(/\s+/)[0];
  const found = createHash('sha1').update(bytes).digest('hex');
  if (found !== expected) throw new Error(`S3Proxy jar from ${S3PROXY_JAR_URL}: SHA-1 ${found}, Maven Central says ${expected}`);
  const temp = `${jar}.${process.pid}.tmp`;
  writeFileSync(temp, bytes);
  renameSync(temp, jar);
  return jar;
}

export async function startS3Proxy(buckets: readonly string[] = ['sluice']): Promise<S3TestServer> {
  const jar = await s3ProxyJar();
  const directory = mkdtempSync(join(tmpdir(), 'sluice-s3proxy-'));
  const identity = 'sluice-test-identity';
  const credential = 'sluice-test-credential';
  writeFileSync(
    join(directory, 's3proxy.conf'),
    [
      's3proxy.endpoint=http://127.0.0.1:0',
      's3proxy.authorization=aws-v2-or-v4',
      `s3proxy.identity=${identity}`,
      `s3proxy.credential=${credential}`,
      'jclouds.provider=transient',
      'jclouds.identity=unused',
      'jclouds.credential=unused',
    ].join('\n'),
  );
  const child = spawn('java', ['-Xmx256m', '-jar', jar, '--properties', join(directory, 's3proxy.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`S3Proxy did not start within 60 s:\n${output.slice(-3000)}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const m = /Started ServerConnector@\S*\{HTTP\/1\.1[^}]*\}\{127\.0\.0\.1:(\d+)\}/.exec(output);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`S3Proxy exited with ${code}:\n${output.slice(-3000)}`));
    });
  }).catch((e: unknown) => {
    child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
    throw e;
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const endpoint = `http://127.0.0.1:${port}`;
  const config = { 's3.endpoint': endpoint, 's3.access-key': identity, 's3.secret-key': credential, 's3.region': 'us-east-1', 's3.path.style.access': true };
  const { S3Client, s3SettingsFrom } = await import('../../src/runtime/storage/s3-client.js');
  const { Configuration } = await import('../../src/config/configuration.js');
  const client = new S3Client(s3SettingsFrom(new Configuration(Object.entries(config)), {}));
  for (const b of buckets) await client.createBucket(b);
  return {
    endpoint,
    buckets,
    config,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
