import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

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
  ])('reports %j clearly', (args, message) => {
    const r = sluice(...args);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^\s+at /m); // no stack trace for user errors
    expect(r.code).not.toBe(0);
  });

  it('sluice run --help prints the usage', () => {
    const r = sluice('run', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/usage: sluice run/);
  });

  it('a failing job exits 1 naming the operator and the root cause', () => {
    const r = sluice('run', `${jobs}/failing.ts`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/explode/);
    expect(r.stderr).toMatch(/boom at record 2/);
  });
});
