import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { misplacedOptionsNote, RUN_USAGE } from '../src/cli/run-command.js';

function sluice(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/sluice.js', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** As sluice(), without blocking this process: a server the test runs must answer meanwhile. */
async function sluiceAsync(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) =>
    execFile(process.execPath, ['bin/sluice.js', ...args], { encoding: 'utf8', timeout: 20_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr }),
    ),
  );
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const jobs = 'test/fixtures/jobs';

describe('sluice run', () => {
  it('runs a bounded job with its arguments and exits 0', () => {
    const r = sluice('run', '--no-progress', `${jobs}/word-lengths.ts`, 'stream', 'of', 'words');
    expect(r.stderr).toMatch(/finished in \d+ ms/);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['stream:6', 'of:2', 'words:5']);
  });

  it('runs a job that imports a CommonJS package requiring Node built-ins (pg): the bundle gives it require', () => {
    const r = sluice('run', '--no-progress', `${jobs}/commonjs-import.ts`);
    expect(r.stderr).toMatch(/finished in \d+ ms/);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['Client:function:true', 'Pool:function:true']);
  });

  it('runs a job that imports packages with native code (lmdb, @node-rs/crc32): loaded where installed, not bundled', () => {
    const r = sluice('run', '--no-progress', `${jobs}/native-import.ts`);
    expect(r.stderr).toMatch(/finished in \d+ ms/);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['a:3904355907:function', 'b:1908338681:function']);
  });

  it('serves REST on a free port when rest.port is taken (the JobManager\'s port error ended the run)', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { spawn } = await import('node:child_process');
      // Asynchronous: the blocker must keep answering while the run starts.
      const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const p = spawn(process.execPath, ['bin/sluice.js', 'run', '--no-progress', '-D', `rest.port=${port}`, `${jobs}/word-lengths.ts`, 'a'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        p.on('exit', (code) => resolve({ code, stdout, stderr }));
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe('a:1');
      const rest = /REST API at http:\/\/127\.0\.0\.1:(\d+)/.exec(r.stderr);
      expect(rest, r.stderr).not.toBeNull();
      expect(Number(rest![1])).not.toBe(port);
    } finally {
      blocker.close();
    }
  });

  it('takes -p and -D', () => {
    const r = sluice('run', '-p', '2', '-D', 'execution.buffer-batch-size=8', `${jobs}/word-lengths.ts`, 'a');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^[12]> a:1$/); // a parallel print sink prefixes the subtask, as Flink's
  });

  it.each([
    [['run', `${jobs}/missing.ts`], /job file not found: test\/fixtures\/jobs\/missing\.ts/],
    [['run', `${jobs}/no-default.ts`], /has no default export; end it with: export default defineJob/],
    [['run', `${jobs}/not-a-job.ts`], /is not a job; wrap the job in defineJob/],
    [['run', `${jobs}/type-error.ts`], /type-error\.ts:6:\d+ - error TS2345: .*string.*number/s],
    [['run', '--no-typecheck', `${jobs}/syntax-error.ts`], /syntax-error\.ts:4:\d+ - /],
    [['run', `${jobs}/empty.ts`], /built no dataflow/],
    [['run', '-D', 'execution.checkpointing.intervall=10s', `${jobs}/word-lengths.ts`], /unknown configuration key 'execution\.checkpointing\.intervall'; did you mean 'execution\.checkpointing\.interval'\?/],
    [['run', '-D', 'parallelism.default=two', `${jobs}/word-lengths.ts`], /invalid value "two" for 'parallelism\.default': expected an integer/],
    [['run', '-p', '0', `${jobs}/word-lengths.ts`], /invalid parallelism '0': give an integer >= 1/],
    [['run', '-p', 'x', `${jobs}/word-lengths.ts`], /invalid parallelism 'x'/],
    [['run'], /no job file given/],
    [['run', '--allow-non-restored-state', `${jobs}/word-lengths.ts`], /--allow-non-restored-state needs -s <path>/],
    [['run', '-s', '/nonexistent/savepoint', `${jobs}/word-lengths.ts`], /\/nonexistent\/savepoint/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['list', '--bogus'], /unknown option '--bogus'/],
    [['checkpoints', '--bogus', '0123456789abcdef0123456789abcdef'], /unknown option '--bogus'/],
    [['savepoint', '--bogus', '0123456789abcdef0123456789abcdef'], /unknown option '--bogus'/],
    // An extra argument is refused, not ignored: this one cancelled without the savepoint.
    [['cancel', '0123456789abcdef0123456789abcdef', '/tmp/savepoints'], /unexpected argument after the job id: \/tmp\/savepoints\nusage: sluice cancel/],
    [['info', '0123456789abcdef0123456789abcdef', 'x', 'y'], /unexpected arguments after the job id: x y/],
    [['savepoint', '0123456789abcdef0123456789abcdef', '/tmp/sp', 'extra'], /unexpected argument after the job id: extra/],
  ])('reports %j clearly', (args, message) => {
    const r = sluice(...args);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^\s+at /m); // no stack trace for user errors
    expect(r.code).not.toBe(0);
  });

  // Everything after the job file goes to the job (as in Flink's CLI): a job that cannot make
  // sense of a misplaced option's words fails with a note that says where options go.
  it.each([
    [['run', 'examples/nexmark-hot-items.ts', '--jobmanager', '127.0.0.1:1'], /'--jobmanager 127\.0\.0\.1:1' came after the job file.*sluice run --jobmanager 127\.0\.0\.1:1 <job\.ts>/s],
    [['run', 'examples/nexmark-hot-items.ts', '-p', '2', '--embedded'], /the job's definition threw Error: events must be a positive integer, got '-p'\nnote: '-p 2', '--embedded' came after the job file/],
  ])('options after the job file: %j', (args, message) => {
    const r = sluice(...args);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(1);
  });

  it('a job whose definition throws: its error and its frames down to the job file, not the CLI\'s', () => {
    const r = sluice('run', 'examples/nexmark-hot-items.ts', 'many');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: examples\/nexmark-hot-items\.ts: the job's definition threw Error: events must be a positive integer, got 'many'/m);
    const frames = r.stderr.split('\n').filter((l) => /^\s+at /.test(l));
    expect(frames.at(-1)).toMatch(/examples\/nexmark-hot-items\.ts:\d+:\d+/);
    expect(r.stderr).not.toMatch(/cli\/(run-command|main)\.js/);
  });

  it('a job module that executes its own environment: an error naming the fix, and the job does not run inside the definition', () => {
    const r = sluice('run', `${jobs}/executes-itself.ts`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the job executes its own environment \(env\.execute\(\), executeAsync\(\) or executeAndCollect\(\) inside a defineJob function\).*Remove the call/s);
    expect(r.stdout).not.toMatch(/collected/);
  });

  it('the note knows every option of the usage line', () => {
    const options = [...new Set(RUN_USAGE.match(/(?<=[[ |])--?[a-zA-Z][\w-]*/g))];
    expect(options.length).toBeGreaterThan(10);
    for (const o of options) expect(misplacedOptionsNote(['x', o, 'v']), o).toMatch(/came after the job file/);
  });

  it('a job file that is not a TypeScript or JavaScript module is refused up front (exit 2), naming it and the extensions taken; a directory and a missing file are named too', async () => {
    const { copyFileSync, mkdirSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-ext-'));
    // A job's code under another name: esbuild loaded job.txt as text ("is not a job") and
    // refused job.py with its own message.
    for (const [name, what] of [['job.txt', 'a .txt file'], ['job.py', 'a .py file'], ['job', 'it has no extension']] as const) {
      const file = join(dir, name);
      copyFileSync(`${jobs}/word-lengths.ts`, file);
      const r = sluice('run', file, 'a');
      expect(r.stderr, name).toBe(`error: ${file} is not a job module (${what}); give a TypeScript or JavaScript file ending in .ts, .mts, .cts, .tsx, .js, .mjs, .cjs or .jsx\n`);
      expect(r.code, name).toBe(2);
    }
    mkdirSync(join(dir, 'job.ts'));
    const directory = sluice('run', join(dir, 'job.ts'));
    expect(directory.stderr).toBe(`error: ${join(dir, 'job.ts')} is a directory; give the path of a job module such as ${join(dir, 'job.ts', 'job.ts')}\n`);
    const missing = sluice('run', join(dir, 'missing.txt'));
    expect(missing.stderr).toMatch(new RegExp(`^error: job file not found: ${escapeRegExp(join(dir, 'missing.txt'))} .*\n$`));
    expect(missing.code).toBe(1);
  });

  it.each([
    // Reported against an operator ("operator 'Map': parallelism must be ..."), exit 1.
    [['-p', '99999'], "invalid parallelism '99999': give an integer >= 1 and <= 32768 (Flink's upper bound), e.g. -p 2"],
    [['--parallelism=32769'], "invalid parallelism '32769': give an integer >= 1 and <= 32768 (Flink's upper bound), e.g. --parallelism 2"],
    // Accepted without -s, and nothing to claim.
    [['--claim-mode', 'CLAIM'], '--claim-mode only applies with -s <path>: it says who owns the snapshot a run restores from; give -s <savepoint or checkpoint>, or drop --claim-mode'],
    [['--claimMode', 'no_claim'], '--claimMode only applies with -s <path>: it says who owns the snapshot a run restores from; give -s <savepoint or checkpoint>, or drop --claimMode'],
    [['-rm', 'claim'], '-rm only applies with -s <path>: it says who owns the snapshot a run restores from; give -s <savepoint or checkpoint>, or drop -rm'],
    // Refused, naming --allow-non-restored-state when -n was given.
    [['-n'], '-n needs -s <path>: it lets a restore skip state no operator of the job takes; give -s <savepoint or checkpoint>, or drop -n'],
  ])('sluice run %j <job> is a usage error (exit 2) naming the flag', (options, message) => {
    const r = sluice('run', ...options, `${jobs}/word-lengths.ts`, 'a');
    expect(r.stderr.split('\n')[0]).toBe(`error: ${message}`);
    expect(r.code).toBe(2);
  });

  it('takes -p from 1 to 32768 (the upper bound of max parallelism)', async () => {
    const { parseRunArgs } = await import('../src/cli/run-command.js');
    for (const p of ['1', '2', '128', '32768']) expect(parseRunArgs(['-p', p, 'job.ts']).config.getNumber('parallelism.default')).toBe(Number(p));
    expect(parseRunArgs(['--parallelism=32768', 'job.ts']).config.getNumber('parallelism.default')).toBe(32768);
    expect(parseRunArgs(['-s', '/sp', '--claim-mode', 'claim', '-n', 'job.ts']).allowNonRestoredState).toBe(true);
  });

  it('sluice run --help prints the usage', () => {
    const r = sluice('run', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/usage: sluice run/);
  });

  it.each(['list', 'info', 'cancel', 'checkpoint', 'checkpoints', 'savepoint', 'stop', 'jobmanager', 'taskmanager', 'cluster'])('sluice %s --help prints its usage (it was an error)', (command) => {
    const r = sluice(command, '--help');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^usage: sluice ${command} `));
  });

  it('a definition that never finishes exits 1 saying so (it exited 0 without a word); a thrown string is shown as such', () => {
    const never = sluice('run', '--embedded', '--no-typecheck', `${jobs}/never-defined.ts`);
    expect(never.code, never.stderr).toBe(1);
    expect(never.stderr).toMatch(/never-defined\.ts: the job's definition never finished: it awaits something that cannot happen any more/);
    const thrown = sluice('run', '--embedded', '--no-typecheck', `${jobs}/throws-string.ts`);
    expect(thrown.code).toBe(1);
    expect(thrown.stderr).toMatch(/throws-string\.ts: the job's definition threw a non-Error value: no input file given/);
  });

  it('a failing job exits 1 naming the operator and the root cause', () => {
    const r = sluice('run', `${jobs}/failing.ts`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/explode/);
    expect(r.stderr).toMatch(/boom at record 2/);
  });
});

describe('the REST commands against a server that answers JSON of another shape', () => {
  // A server that is not a JobManager's REST API, answering 200 with `answer` to every request.
  // The commands read fields it lacks and failed with a stack trace (RangeError: Invalid time
  // value, TypeError: Cannot read properties of undefined), printed "Checkpoint undefined ...
  // completed", or polled without end.
  let server: import('node:http').Server;
  let baseUrl: string;
  let answer = '{}';
  beforeAll(async () => {
    const { createServer } = await import('node:http');
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const id = '0123456789abcdef0123456789abcdef';
  it.each([
    [['list'], {}, 'GET /jobs/overview', "'jobs' is missing, not an array"],
    [['list'], [], 'GET /jobs/overview', 'it is not a JSON object'],
    [['list'], { jobs: 5 }, 'GET /jobs/overview', "'jobs' is a number, not an array"],
    [['list'], { jobs: [5] }, 'GET /jobs/overview', "'jobs[0]' is a number, not an object"],
    [['list'], { jobs: [{ jid: id, name: 'n', state: 'RUNNING' }] }, 'GET /jobs/overview', "'jobs[0].start-time' is missing, not a number"],
    [['info', id], {}, `GET /jobs/${id}`, "'jid' is missing, not a string"],
    [['info', id], { jid: id, name: 'n', state: 'RUNNING', 'start-time': 1, 'end-time': -1, duration: 1, vertices: [{ name: 'Map' }] }, `GET /jobs/${id}`, "'vertices[0].parallelism' is missing, not a number"],
    [['checkpoints', id], { counts: {}, history: [] }, `GET /jobs/${id}/checkpoints`, "'counts.completed' is missing, not a number"],
    [['checkpoints', id], { counts: { completed: 1, failed: 0, in_progress: 0, restored: 0 }, history: [{}] }, `GET /jobs/${id}/checkpoints`, "'history[0].id' is missing, not a number"],
    [['checkpoint', id], {}, `POST /jobs/${id}/checkpoints`, "'request-id' is missing, not a string"],
    [['checkpoint', id], { 'request-id': 'r', status: { id: 'COMPLETED' } }, `GET /jobs/${id}/checkpoints/r`, "'operation' is missing, not an object"],
    [['checkpoint', id], { 'request-id': 'r', status: { id: 'DONE' } }, `GET /jobs/${id}/checkpoints/r`, "'status.id' is 'DONE', not IN_PROGRESS or COMPLETED"],
  ])('sluice %j, answered %j: one line naming the request, the address and the fields', async (args, body, request, problem) => {
    answer = JSON.stringify(body);
    const r = await sluiceAsync(...args, '--jobmanager', baseUrl.replace('http://', ''));
    const lines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('Waiting for'));
    expect(lines).toEqual([
      `error: ${request}: the answer of ${baseUrl} is not what a Sluice JobManager sends (${problem}); is --jobmanager the right address, and the server the same version as this CLI?`,
    ]);
    expect(r.code).toBe(1);
  });
});

describe('sluice savepoint --dispose of a path that is not a savepoint', () => {
  it('names the path and what a savepoint path is, deleting nothing (a _metadata directory gave a bare EISDIR)', async () => {
    const { existsSync, mkdirSync, mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-dispose-'));
    mkdirSync(join(dir, 'odd', '_metadata'), { recursive: true });
    const odd = sluice('savepoint', '--dispose', join(dir, 'odd'));
    expect(odd.stderr).toMatch(
      new RegExp(`^error: cannot dispose of ${escapeRegExp(join(dir, 'odd'))}: EISDIR[^\n]*; a savepoint path is the directory holding the savepoint's _metadata file, as printed by sluice savepoint and sluice stop\n$`),
    );
    expect(odd.code).toBe(1);
    expect(existsSync(join(dir, 'odd', '_metadata'))).toBe(true);
    // A file, a missing path and a directory of something else: refused by the dispose itself.
    writeFileSync(join(dir, 'a-file'), 'x');
    mkdirSync(join(dir, 'empty'));
    for (const path of [join(dir, 'a-file'), join(dir, 'missing'), join(dir, 'empty')]) {
      const r = sluice('savepoint', '--dispose', path);
      expect(r.stderr, path).toMatch(new RegExp(`^error: [^\n]*${escapeRegExp(path)}[^\n]*savepoint directory[^\n]*\n$`));
      expect(r.code, path).toBe(1);
    }
    expect(existsSync(join(dir, 'empty'))).toBe(true);
  });
});

describe('sluice stop against sluice run', () => {
  // `sluice run` without --jobmanager runs the job on an embedded cluster that goes away with
  // the job. A stop ends the job, and the stop's result is fetched after that: the REST API
  // must still answer then (it did not, and `sluice stop` failed with "cannot reach").
  it('stops the job of an embedded cluster: stop prints the savepoint, run exits 0', { timeout: 60_000 }, async () => {
    const { spawn, execFile } = await import('node:child_process');
    const { mkdtempSync, readdirSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-stop-'));
    const run = spawn(process.execPath, ['bin/sluice.js', 'run', '--no-progress', '-D', 'rest.port=0', 'examples/checkpointed-count.ts', join(dir, 'out'), '100000000', '-1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => run.on('exit', (code) => resolve(code)));
    try {
      await expect.poll(() => /REST API at http:\/\/([\d.]+:\d+)/.exec(stderr)?.[1], { timeout: 30_000 }).toBeDefined();
      const address = /REST API at http:\/\/([\d.]+:\d+)/.exec(stderr)![1]!;
      const jobId = /Job ([0-9a-f]{32}) submitted/.exec(stderr)![1]!;
      const stop = () =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
          execFile(process.execPath, ['bin/sluice.js', 'stop', '-m', address, '--savepoint-path', join(dir, 'sp'), jobId], { timeout: 30_000 }, (err, stdout, stderr) =>
            resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? 1), stdout, stderr }),
          ),
        );
      // Refused until the job runs and has checkpointed; then the stop goes through.
      let r = await stop();
      for (let i = 0; i < 50 && r.code !== 0 && /not running|no savepoint now|cannot stop it/.test(r.stderr); i++) {
        await new Promise((res) => setTimeout(res, 200));
        r = await stop();
      }
      expect(r.stderr).not.toMatch(/cannot reach/);
      expect(r.code).toBe(0);
      const savepoint = /Job [0-9a-f]{32} stopped\. Savepoint: (\S+)/.exec(r.stdout)?.[1];
      expect(savepoint).toBeDefined();
      expect(readdirSync(savepoint!)).toContain('_metadata');
      expect(await exited).toBe(0);
      expect(stderr).toMatch(new RegExp(`Job ${jobId} finished in \\d+ ms`));
    } finally {
      run.kill('SIGKILL');
    }
  });
});

describe('the configuration file', () => {
  async function confDir(text: string): Promise<string> {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-conf-'));
    writeFileSync(join(dir, 'config.yaml'), text);
    return dir;
  }
  const withConf = (dir: string, ...args: string[]) => {
    const r = spawnSync(process.execPath, ['bin/sluice.js', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SLUICE_CONF_DIR: dir } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('$SLUICE_CONF_DIR/config.yaml configures sluice run; -p and -D override it', async () => {
    const dir = await confDir('parallelism:\n  default: 2\nexecution.buffer-batch-size: 8\n');
    const fromFile = withConf(dir, 'run', '--embedded', '--no-progress', `${jobs}/word-lengths.ts`, 'a');
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout.trim()).toMatch(/^[12]> a:1$/); // parallel: the print sink prefixes the subtask
    const overridden = withConf(dir, 'run', '--embedded', '--no-progress', '-p', '1', `${jobs}/word-lengths.ts`, 'a');
    expect(overridden.stdout.trim()).toBe('a:1');
  });

  it('a mistake in it stops every command with the file, the line and the fix', async () => {
    const dir = await confDir('rest.port: 8081\nexecution.checkpointing.intervall: 10s\n');
    for (const args of [['run', `${jobs}/word-lengths.ts`], ['list'], ['taskmanager', '--jobmanager', '127.0.0.1:1'], ['savepoint', 'inspect', '/tmp']]) {
      const r = withConf(dir, ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/config\.yaml:2: unknown configuration key 'execution\.checkpointing\.intervall'; did you mean 'execution\.checkpointing\.interval'\?/);
    }
  });

  it('the REST commands take the JobManager address and token from its rest.* options', async () => {
    const { createServer } = await import('node:net');
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = withConf(await confDir(`rest:\n  address: 127.0.0.1\n  port: ${port}\n`), 'list');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`127.0.0.1:${port}`);
  });
});

describe('the command that resumes a suspended sluice run', () => {
  it('keeps options, job file and job arguments, replaces the restore options, quotes for the shell and hides secrets', async () => {
    const { resumeCommand } = await import('../src/cli/run-command.js');
    expect(resumeCommand(['-p', '2', '-s', '/old/chk-3', '-n', '--claim-mode', 'claim', 'job.ts', 'out dir', "it's", '--', '-x'], '/chk/chk-9')).toBe(
      "sluice run -s /chk/chk-9 -p 2 job.ts 'out dir' 'it'\\''s' -- -x",
    );
    expect(resumeCommand(['--token', 'abc', '-D', 'rest.auth.token=abc', '-Dcluster.secret=xyz', '-D', 'parallelism.default=3', '--', 'job.ts'], '/c')).toBe(
      "sluice run -s /c --token '<token>' -D 'rest.auth.token=<hidden>' -D 'cluster.secret=<hidden>' -D parallelism.default=3 -- job.ts",
    );
  });
});

describe('sluice run -D rest.enabled=false', () => {
  // The embedded cluster served REST anyway, on a free port.
  it('runs the job on the embedded cluster without a REST API: its process listens on the rpc port only', { timeout: 60_000 }, async () => {
    const { spawn, execFileSync } = await import('node:child_process');
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-norest-'));
    const run = spawn(process.execPath, ['bin/sluice.js', 'run', '--no-progress', '-D', 'rest.enabled=false', 'examples/checkpointed-count.ts', join(dir, 'out'), '100000000', '-1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const listening = (): string[] =>
      execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes(`pid=${run.pid},`))
        .map((l) => l.split(/\s+/)[3]!);
    try {
      // Listening once the JobManager started; the REST API started right after the rpc port.
      await expect.poll(listening, { timeout: 30_000, interval: 100 }).not.toEqual([]);
      const seen = new Set<string>();
      for (let i = 0; i < 30; i++) {
        for (const a of listening()) seen.add(a);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect([...seen], stderr).toHaveLength(1);
      expect(stderr).not.toMatch(/REST API/);
      expect(run.exitCode, stderr).toBeNull(); // the job still runs
    } finally {
      run.kill('SIGKILL');
    }
  });
});

describe('sluice jobmanager', () => {
  // It logged the error and then kept running (its rpc port still listened) without a REST API.
  it('exits with a clear error when its REST port is taken', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = spawnSync(process.execPath, ['bin/sluice.js', 'jobmanager', '--rpc-port', '0', '--rest-port', String(port)], { encoding: 'utf8', timeout: 20_000 });
      expect(r.signal, 'still running after 20 s').toBeNull();
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(new RegExp(`the REST port ${port} is taken; give another with --rest-port or -D rest\\.port=<port> \\(0: any free port\\)`));
    } finally {
      blocker.close();
    }
  });
});

describe('sluice run -d without --jobmanager', () => {
  // It was refused ("--detached needs --jobmanager"): a script had to know the cluster's
  // address although the job commands find it themselves (as Flink's `flink run -d`).
  it('submits to the address of the job commands (SLUICE_JOBMANAGER or the configuration file), and says how to start a cluster when none is there', { timeout: 90_000 }, async () => {
    const { spawn } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { createServer } = await import('node:net');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const jm = spawn(process.execPath, ['bin/sluice.js', 'jobmanager', '--rpc-port', '0', '--rest-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      jm.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await expect.poll(() => out, { timeout: 30_000 }).toMatch(/REST API at http:\/\/127\.0\.0\.1:\d+/);
      const port = Number(/REST API at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
      const conf = mkdtempSync(join(tmpdir(), 'sluice-cli-detached-'));
      writeFileSync(join(conf, 'config.yaml'), `rest.port: ${port}\n`);
      const submit = (env: Record<string, string>) =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
          const p = spawn(process.execPath, ['bin/sluice.js', 'run', '-d', '--no-typecheck', `${jobs}/word-lengths.ts`, 'a'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
          let stdout = '';
          let stderr = '';
          p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          p.on('exit', (code) => resolve({ code, stdout, stderr }));
        });
      for (const env of [{ SLUICE_JOBMANAGER: `127.0.0.1:${port}` }, { SLUICE_CONF_DIR: conf }] as Record<string, string>[]) {
        const r = await submit(env);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/^[0-9a-f]{32}\n$/);
        expect(r.stderr).toContain(`submitted to http://127.0.0.1:${port}`);
        const list = await sluiceAsync('list', '--jobmanager', `127.0.0.1:${port}`);
        expect(list.stdout).toContain(r.stdout.trim());
      }
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const nobody = (closed.address() as { port: number }).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const none = await submit({ SLUICE_JOBMANAGER: `127.0.0.1:${nobody}` });
      expect(none.code).toBe(1);
      expect(none.stderr).toContain(`error: -d submits to a running cluster, and there is none at http://127.0.0.1:${nobody}`);
      expect(none.stderr).toContain('start one with sluice cluster start, or give its REST address with --jobmanager host:port');
    } finally {
      jm.kill('SIGKILL');
    }
  });

  it('--embedded with -d is a usage error', () => {
    const r = sluice('run', '--embedded', '-d', `${jobs}/word-lengths.ts`, 'a');
    expect(r.stderr.split('\n')[0]).toBe('error: --embedded and --detached exclude each other: a detached job runs on a cluster (sluice cluster start), an embedded one in this process');
    expect(r.code).toBe(2);
  });
});

describe('addresses and ports given on the command line', () => {
  it('a port out of range or a malformed REST address is a usage error (exit 2) naming the value, not a stack trace or an unreachable server', () => {
    for (const args of [
      ['jobmanager', '--rpc-port', '70000'],
      ['jobmanager', '--rest-port', '70000'],
      ['taskmanager', '--jobmanager', '127.0.0.1:70000'],
    ]) {
      const r = sluice(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/70000/);
      expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
    for (const address of ['127.0.0.1:abc', '127.0.0.1:70000', ':8081', '127.0.0.1']) {
      const r = sluice('list', '-m', address);
      expect(r.code, address).toBe(2);
      expect(r.stderr, address).toMatch(new RegExp(`'${address.replace(/\./g, '\\.')}' (is not host:port|has no port); give the REST API's host:port`));
    }
  });

  it('an address that cannot be resolved names its option and value (a bare "getaddrinfo ENOTFOUND", and a stack trace from the TaskManager)', () => {
    const host = 'no-such-host.invalid';
    const give = (flags: string) => `give a host name or IP address of this machine with ${flags}=<address>`;
    for (const [args, prefix, fix] of [
      [['jobmanager', '--rpc-port', '0', '--rest-port', '0', '--rest-address', host], `the JobManager cannot start: the REST address '${host}' (rest.address)`, give('--rest-address or -D rest.address')],
      [['jobmanager', '--rpc-port', '0', '--rest-port', '0', '-D', `jobmanager.rpc.address=${host}`], `the JobManager cannot start: the rpc address '${host}' (jobmanager.rpc.address)`, give('-D jobmanager.rpc.address')],
      [['cluster', 'run', '--taskmanagers', '1', '--rpc-port', '0', '--rest-port', '0', '--rest-address', host], `the cluster cannot start: the REST address '${host}' (rest.address)`, give('--rest-address or -D rest.address')],
      [['taskmanager', '--jobmanager', '127.0.0.1:1', '-D', `taskmanager.host=${host}`], `the TaskManager cannot start: its address '${host}' (taskmanager.host)`, give('-D taskmanager.host')],
    ] as const) {
      const r = sluice(...args);
      // ENOTFOUND, or EAI_AGAIN where no name server answers.
      expect(r.stderr, args.join(' ')).toMatch(new RegExp(`^error: ${escapeRegExp(prefix)} cannot be resolved \\([A-Z_]+\\); ${escapeRegExp(fix)}\n$`));
      expect(r.code, args.join(' ')).toBe(1);
    }
    const run = sluice('run', '--embedded', '-D', `rest.address=${host}`, `${jobs}/word-lengths.ts`);
    expect(run.stderr).toMatch(new RegExp(`^error: ${escapeRegExp(`cannot serve the REST API on ${host}:8081 (rest.address, rest.port): `)}.*; ${escapeRegExp('give an address of this machine with -D rest.address=<address>')}\n$`));
    expect(run.code).toBe(1);
  });

  it('--token without --jobmanager is refused: it would not protect the run\'s own REST API', () => {
    const r = sluice('run', '--embedded', '--token', 's3cret', `${jobs}/word-lengths.ts`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--token is the token for the REST API of the JobManager given with --jobmanager; .*-D rest\.auth\.token=<token>/);
  });
});

describe('sluice --version', () => {
  it.each([['--version'], ['-V'], ['version']])('%s prints the version of package.json and of Node.js', async (flag) => {
    const { readFileSync } = await import('node:fs');
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const r = sluice(flag);
    expect(r.stdout).toBe(`sluice ${version} (Node.js ${process.version})\n`);
    expect(r.code).toBe(0);
  });
});

describe('sluice run --resume <dir>', () => {
  it('a directory without a completed checkpoint, a missing one, an s3:// URL and -s with --resume are refused naming the fix', async () => {
    const { mkdirSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-resume-'));
    // A job directory with a checkpoint that never completed (no _metadata).
    mkdirSync(join(dir, '0123456789abcdef0123456789abcdef', 'chk-3'), { recursive: true });
    const empty = sluice('run', '--resume', dir, `${jobs}/word-lengths.ts`, 'a');
    expect(empty.stderr).toBe(
      `error: --resume ${dir}: the directory holds no completed checkpoint, so there is nothing to resume from. Give the execution.checkpointing.dir of the run to resume (checkpoints live in <dir>/<jobId>/chk-N), or run without --resume to start from the beginning\n`,
    );
    expect(empty.code).toBe(1);
    const missing = sluice('run', '--resume', join(dir, 'nope'), `${jobs}/word-lengths.ts`, 'a');
    expect(missing.stderr).toContain(`--resume ${join(dir, 'nope')}: the directory does not exist`);
    const s3 = sluice('run', '--resume', 's3://bucket/chk', `${jobs}/word-lengths.ts`, 'a');
    expect(s3.stderr).toContain('--resume looks for checkpoints in a local directory; for s3://bucket/chk, pass the checkpoint itself with -s <dir>/<jobId>/chk-N');
    expect(s3.code).toBe(2);
    const both = sluice('run', '-s', dir, '--resume', dir, `${jobs}/word-lengths.ts`, 'a');
    expect(both.stderr.split('\n')[0]).toBe('error: -s and --resume exclude each other: -s names one savepoint or checkpoint, --resume finds the newest checkpoint under a directory');
    expect(both.code).toBe(2);
  });
});

describe('sluice init', () => {
  it('refuses a directory with files, a file, a bad package name and a missing directory argument, writing nothing', async () => {
    const { mkdtempSync, readdirSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-init-'));
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const full = sluice('init', dir);
    expect(full.stderr).toBe(`error: ${dir} is not empty (notes.txt); give a new directory, or --force to write the starter files over what is there\n`);
    expect(full.code).toBe(1);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    const file = sluice('init', join(dir, 'notes.txt'));
    expect(file.stderr).toContain('notes.txt exists and is not a directory');
    const badName = sluice('init', join(dir, 'new'), '--name', 'My Job');
    expect(badName.stderr).toBe("error: 'My Job' is not a valid npm package name (lower-case letters, digits, '-', '.', '_', '~'); give one with --name\n");
    expect(badName.code).toBe(2);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    const none = sluice('init');
    expect(none.stderr).toContain('give the directory of the new project, e.g. sluice init my-job');
    expect(none.code).toBe(2);
  });

  it('writes the starter; from a checkout, it depends on the checkout (the packed tarball case is test/package-install.test.ts)', async () => {
    const { mkdtempSync, readFileSync, existsSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join, resolve } = await import('node:path');
    const dir = join(mkdtempSync(join(tmpdir(), 'sluice-cli-init-')), 'My Orders');
    const r = sluice('init', dir);
    expect(r.code, r.stderr).toBe(0);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; dependencies: Record<string, string>; engines: { node: string } };
    expect(pkg.name).toBe('my-orders');
    expect(pkg.dependencies.sluice).toBe(`file:${resolve('.')}`);
    const own = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(own.engines.node);
    for (const f of ['.gitignore', 'README.md', 'tsconfig.json', 'src/job.ts', 'src/orders.ts', 'test/orders.test.ts']) expect(existsSync(join(dir, f)), f).toBe(true);
    expect(r.stdout).toContain('npm install');
  });
});
