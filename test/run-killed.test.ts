import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { latestRetainedCheckpoint } from '../src/cluster/job-manager.js';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import { countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'sluice.js');
const JOB = join(import.meta.dirname, 'fixtures', 'cluster', 'keyed-count-job.ts');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('sluice run killed with SIGKILL (the embedded cluster dies with it)', () => {
  it('the next run with the same checkpoint directory does not take the killed job back; --resume <dir> resumes it exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-run-killed-'));
    dirs.push(dir);
    const chk = join(dir, 'chk');
    const outA = join(dir, 'out-a');
    const outB = join(dir, 'out-b');
    const common = ['--no-typecheck', '--no-progress', '-p', '2', '-D', 'execution.checkpointing.interval=100', '-D', `execution.checkpointing.dir=${chk}`, '-D', 'rest.port=0'];
    const records = 24_000;
    const keys = 7;

    // Run A: about 8 s of numbers; killed, TaskManagers and all, once it has committed output.
    const a = spawn(process.execPath, [BIN, 'run', ...common, JOB, outA, String(records), String(keys), '3000'], { stdio: 'ignore' });
    let jobA: string | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      await sleep(100);
      jobA = existsSync(chk) ? readdirSync(chk).find((n) => /^[0-9a-f]{32}$/.test(n)) : undefined;
      if (jobA !== undefined && latestRetainedCheckpoint(join(chk, jobA)) !== undefined && (await readCommittedLines(outA)).length > 1_000) break;
    }
    expect(jobA, 'run A checkpointed and committed output').toBeDefined();
    const taskManagers = execFileSync('pgrep', ['-P', String(a.pid)], { encoding: 'utf8' }).trim().split('\n').map(Number);
    a.kill('SIGKILL');
    await new Promise((r) => a.once('exit', r));
    while (taskManagers.some(isAlive)) await sleep(100); // they notice their cluster is gone
    const committedA = (await readCommittedLines(outA)).length;
    expect(committedA).toBeLessThan(records);

    // Run B, another job with the same checkpoint directory: it runs only its own job.
    const b = spawnSync(process.execPath, [BIN, 'run', ...common, JOB, outB, '2000', '3', '20000'], { encoding: 'utf8', timeout: 60_000 });
    expect(b.status, b.stderr).toBe(0);
    expect(b.stderr).not.toContain(jobA!);
    expect(compareMultisets(await readCommittedLines(outB), countReference(2000, 3))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect((await readCommittedLines(outA)).length, 'run B wrote nothing for the killed job').toBe(committedA);

    // The killed job resumes from its latest retained checkpoint, found by --resume in the
    // checkpoint directory (run B finished, so its own checkpoints are gone): every count exactly once.
    const latest = latestRetainedCheckpoint(join(chk, jobA!))!;
    const resumed = spawnSync(process.execPath, [BIN, 'run', ...common, '--resume', chk, JOB, outA, String(records), String(keys), '6000'], { encoding: 'utf8', timeout: 90_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`Resuming from the newest checkpoint under ${chk}: ${latest}`);
    expect(resumed.stderr).toContain(`restoring from checkpoint`);
    expect(compareMultisets(await readCommittedLines(outA), countReference(records, keys))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  }, 180_000);
});

describe('sluice run stopped with SIGTERM', () => {
  it('suspends the job: its checkpoints stay (whatever the retention), the resume command is printed, and -s resumes it exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-run-term-'));
    dirs.push(dir);
    const chk = join(dir, 'chk');
    const out = join(dir, 'out');
    // The default retention deletes a canceled job's checkpoints: a suspended job keeps them.
    const common = ['--no-typecheck', '--no-progress', '-p', '2', '-D', 'execution.checkpointing.interval=100', '-D', `execution.checkpointing.dir=${chk}`, '-D', 'rest.port=0'];
    const records = 24_000;
    const keys = 7;
    const a = spawn(process.execPath, [BIN, 'run', ...common, JOB, out, String(records), String(keys), '3000'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    a.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => a.once('exit', (code) => r(code)));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && (await readCommittedLines(out)).length < 1_000) await sleep(100);
    a.kill('SIGTERM');
    expect(await exited, stderr).toBe(143);
    const resume = /Resume it with: sluice run -s (\S+) (.*)$/m.exec(stderr);
    expect(resume, stderr).not.toBeNull();
    expect(existsSync(join(resume![1]!, '_metadata')), 'the named checkpoint is kept').toBe(true);
    // The same options, job and job arguments (they were dropped).
    const argv = [...common, JOB, out, String(records), String(keys), '3000'];
    expect(resume![2]).toBe(argv.join(' '));
    expect((await readCommittedLines(out)).length).toBeLessThan(records);

    // The printed command, as printed (its words need no shell quoting here).
    const resumed = spawnSync(process.execPath, [BIN, 'run', '-s', resume![1]!, ...resume![2]!.split(' ')], { encoding: 'utf8', timeout: 90_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(compareMultisets(await readCommittedLines(out), countReference(records, keys))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  }, 180_000);
});
