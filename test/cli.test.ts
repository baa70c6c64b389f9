import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { misplacedOptionsNote, RUN_USAGE } from '../src/cli/run-command.js';

function sluice(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/sluice.js', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

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

  it('--token without --jobmanager is refused: it would not protect the run\'s own REST API', () => {
    const r = sluice('run', '--embedded', '--token', 's3cret', `${jobs}/word-lengths.ts`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--token is the token for the REST API of the JobManager given with --jobmanager; .*-D rest\.auth\.token=<token>/);
  });
});
