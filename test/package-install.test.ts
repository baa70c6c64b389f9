/**
 * Sluice as a user gets it: `npm pack`, then, in a fresh project outside the repository, the
 * tarball installed (no symlink, no build step), `sluice init`'s starter type-checked by the
 * project's own tsc (skipLibCheck off) under three module resolutions, its test run, the job
 * run with `npx sluice run`, and submitted to a `sluice cluster`. Runs under the Node.js that
 * runs the suite (.ci/run runs it on every declared Node line).
 */
import { execFile, type ExecFileException } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'sluice-package-'));
/** npm and npx run by the Node.js running the suite (their `#!/usr/bin/env node` finds it first). */
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', SLUICE_CLUSTER_DIR: join(work, 'cluster') };
delete (env as Record<string, string | undefined>).NODE_OPTIONS;

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], cwd: string, timeoutMs = 180_000): Promise<Ran> {
  return new Promise((resolveRun) => {
    execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 << 20 }, (error: ExecFileException | null, stdout, stderr) => {
      resolveRun({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

/** How long each step took, printed at the end (the time a new project takes to run, on this machine). */
const stepTimes: string[] = [];

async function ok(command: string, args: readonly string[], cwd: string, timeoutMs?: number): Promise<Ran> {
  const t0 = performance.now();
  const r = await run(command, args, cwd, timeoutMs);
  stepTimes.push(`${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s  ${command} ${args.join(' ')}`);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited with ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r;
}

const declaredMajors = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
  .split('||')
  .map((range) => Number(/\^?(\d+)/.exec(range.trim())![1]));
const nodeMajor = Number(process.versions.node.split('.')[0]);

let tarball = '';
let project = '';

beforeAll(async () => {
  // dist/ was built by `npm test`'s pretest; --ignore-scripts keeps prepare from building it again under running tests.
  const packed = await ok('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], repo);
  const info = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work, info[0]!.filename);
  const files = info[0]!.files.map((f) => f.path);
  // What the package must hold, and what it must not.
  for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/connectors/index.d.ts', 'dist/testing/index.d.ts', 'dist/cli/main.js', 'bin/sluice.js', 'templates/starter/package.json', 'templates/starter/gitignore', 'README.md']) {
    expect(files, f).toContain(f);
  }
  expect(files.filter((f) => /\.test(-d)?\.(js|d\.ts)$/.test(f) || f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
}, 120_000);

afterAll(async () => {
  process.stdout.write(`package-install steps (Node ${process.version}):\n${stepTimes.join('\n')}\n`);
  if (existsSync(join(work, 'cluster'))) await run('npx', ['--no-install', 'sluice', 'cluster', 'stop'], project || work, 30_000);
  rmSync(work, { recursive: true, force: true });
});

describe(`the packed tarball in a fresh project (Node ${process.version})`, () => {
  it('sluice init writes a starter that installs from the tarball, type-checks strictly, passes its test and runs', { timeout: 420_000 }, async () => {
    const version = await ok('npm', ['exec', '--yes', `--package=${tarball}`, '--', 'sluice', '--version'], work);
    expect(version.stdout).toMatch(/^sluice \d+\.\d+\.\d+ \(Node\.js v\d+/);

    const init = await ok('npx', ['--yes', `--package=${tarball}`, 'sluice', 'init', 'orders-job'], work); // the README's command
    project = join(work, 'orders-job');
    expect(init.stdout).toContain(`It depends on sluice file:${tarball}`);
    expect(readdirSync(project).sort()).toEqual(['.gitignore', 'README.md', 'package.json', 'src', 'test', 'tsconfig.json']);
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string> };
    expect(pkg.name).toBe('orders-job');
    expect(pkg.dependencies.sluice).toBe(`file:${tarball}`);

    // A second init into the same directory is refused: nothing is overwritten.
    const again = await run('npm', ['exec', '--yes', `--package=${tarball}`, '--', 'sluice', 'init', 'orders-job'], work);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('orders-job is not empty');

    const install = await ok('npm', ['install'], project);
    // The tarball was copied, not linked to the repository.
    expect(existsSync(join(project, 'node_modules', 'sluice', 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(project, 'node_modules', 'sluice', 'src'))).toBe(false);
    if (declaredMajors.includes(nodeMajor)) {
      // On a declared Node line no dependency's engines disagree (EBADENGINE).
      expect(install.stderr + install.stdout).not.toContain('EBADENGINE');
    }

    // The project's own tsc with skipLibCheck off: every .d.ts the public entry points reach is checked.
    const tsconfig = JSON.parse(readFileSync(join(project, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
    expect(tsconfig.compilerOptions.skipLibCheck).toBeUndefined();
    writeFileSync(
      join(project, 'src', 'every-entry-point.ts'),
      "import * as sluice from 'sluice';\nimport * as connectors from 'sluice/connectors';\nimport * as testing from 'sluice/testing';\nexport const entryPoints = [sluice, connectors, testing];\n",
    );
    await ok('npx', ['--no-install', 'tsc', '-p', '.'], project);
    // The other module resolutions a project may use: bundler, and node10 (CommonJS's default,
    // through typesVersions). They differ in how 'sluice/...' resolves; the declarations were checked above.
    for (const [name, options] of [
      ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
      ['node10', { module: 'commonjs', moduleResolution: 'node10' }],
    ] as const) {
      writeFileSync(
        join(project, `tsconfig.${name}.json`),
        JSON.stringify({ compilerOptions: { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], ...options }, files: ['src/every-entry-point.ts'] }),
      );
      await ok('npx', ['--no-install', 'tsc', '-p', `tsconfig.${name}.json`], project);
    }

    // A type error in the job: tsc and `sluice run` both report it (they use the same options).
    const orders = readFileSync(join(project, 'src', 'orders.ts'), 'utf8');
    writeFileSync(join(project, 'src', 'broken.ts'), orders.replace('totalCents: acc.totalCents + o.amountCents', 'totalCents: acc.totalCents + o.amount'));
    writeFileSync(join(project, 'src', 'broken-job.ts'), "import { defineJob } from 'sluice';\nimport { totalsPerCustomer } from './broken.ts';\nexport default defineJob((env) => { totalsPerCustomer(env.fromElements()).print(); });\n");
    const tscBroken = await run('npx', ['--no-install', 'tsc', '-p', '.'], project);
    expect(tscBroken.code).not.toBe(0);
    expect(tscBroken.stdout).toContain("Property 'amount' does not exist on type 'Order'");
    const runBroken = await run('npx', ['--no-install', 'sluice', 'run', 'src/broken-job.ts'], project);
    expect(runBroken.code).toBe(1);
    expect(runBroken.stderr).toContain("Property 'amount' does not exist on type 'Order'");
    rmSync(join(project, 'src', 'broken.ts'));
    rmSync(join(project, 'src', 'broken-job.ts'));

    const test = await ok('npm', ['test'], project);
    expect(test.stdout).toMatch(/(?:#|ℹ) pass 2\b/); // node --test: TAP on Node 22 when piped, the spec reporter on 24 and later
    expect(test.stdout).toMatch(/(?:#|ℹ) fail 0\b/);

    // npm start: the job on a local cluster. 2,000 orders, 250 ms apart: minutes 0-7 hold 240
    // orders each, minute 8 holds 80; customers are i*7 mod 5, so every minute splits evenly.
    const start = await ok('npm', ['start'], project);
    const totals = start.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { customer: string; windowStart: string; orders: number; totalCents: number });
    expect(totals.length).toBe(45);
    expect(totals.reduce((n, t) => n + t.orders, 0)).toBe(2_000);
    let expectedCents = 0;
    for (let i = 0; i < 2_000; i++) expectedCents += 100 + ((i * 37) % 900);
    expect(totals.reduce((n, t) => n + t.totalCents, 0)).toBe(expectedCents);
    expect(start.stderr).toMatch(/Job [0-9a-f]{32} finished/);
  });

  it('the job submitted to a sluice cluster started from the project', { timeout: 240_000 }, async () => {
    expect(project, 'the starter test ran first').not.toBe('');
    const started = await ok('npx', ['--no-install', 'sluice', 'cluster', 'start', '--taskmanagers', '1', '--slots', '2', '--rest-port', '0', '--rpc-port', '0'], project, 90_000);
    const rest = /REST API at https?:\/\/(\S+?)[,;\s]/.exec(started.stdout)?.[1];
    expect(rest, started.stdout).toBeDefined();
    const submitted = await ok('npx', ['--no-install', 'sluice', 'run', '--jobmanager', rest!, 'src/job.ts'], project);
    // stdout: the job id alone (for scripts); stderr: what happened to it.
    expect(submitted.stdout).toMatch(/^[0-9a-f]{32}\n$/);
    expect(submitted.stderr).toMatch(/Job [0-9a-f]{32} finished/);
    const list = await ok('npx', ['--no-install', 'sluice', 'list', '--jobmanager', rest!], project);
    expect(list.stdout).toContain('FINISHED');
    // The totals went to the TaskManager's stdout: the cluster's log.
    const log = readFileSync(join(work, 'cluster', 'cluster.log'), 'utf8');
    const totals = log.split('\n').filter((l) => l.includes('{"customer":'));
    expect(totals.length).toBe(45);
    await ok('npx', ['--no-install', 'sluice', 'cluster', 'stop'], project, 60_000);
  });
});
