import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { restGet, sleep, SLUICE_BIN, submitJob } from './support/cluster-processes.js';

/**
 * The log of the `sluice` processes: `--log-format json` writes one JSON object per line with
 * the job, vertex and subtask a line is about, also in the TaskManager processes a cluster
 * starts; `--log-level` drops the lines below it; the plain format stays `[sluice] LEVEL …`.
 */

const FAILING = 'test/fixtures/jobs/failing.ts';
/** One restart, then the job fails for good; with checkpoints, so the restart looks for one to restore. */
const ONE_RESTART = [
  '-D', 'execution.checkpointing.interval=100ms',
  '-D', 'restart-strategy.type=fixed-delay', '-D', 'restart-strategy.fixed-delay.attempts=1', '-D', 'restart-strategy.fixed-delay.delay=10ms',
];

function sluiceRun(...args: string[]): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [SLUICE_BIN, 'run', '--no-typecheck', '--no-progress', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stderr: r.stderr };
}

type JsonLine = Record<string, unknown>;

/** Every non-empty line of `text` as JSON (a line that is not fails the test, naming it). */
function jsonLines(text: string): JsonLine[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as JsonLine;
      } catch {
        throw new Error(`not a JSON line: ${l}\nin:\n${text}`);
      }
    });
}

describe('sluice run: logs', () => {
  it('--log-format json: every stderr line is a JSON object with time, level and message; the restart line names the job, vertex and subtask', () => {
    const r = sluiceRun('--log-format', 'json', ...ONE_RESTART, FAILING);
    expect(r.code, r.stderr).toBe(1);
    const lines = jsonLines(r.stderr);
    for (const l of lines) {
      expect(typeof l.message, JSON.stringify(l)).toBe('string');
      expect(['debug', 'info', 'warn', 'error']).toContain(l.level);
      expect(Number.isNaN(Date.parse(String(l.time))), JSON.stringify(l)).toBe(false);
    }
    const submitted = lines.find((l) => /submitted to a local cluster/.test(String(l.message)));
    const jobId = submitted?.jobId;
    expect(jobId).toMatch(/^[0-9a-f]{32}$/);
    const restart = lines.find((l) => /restarting in 10 ms/.test(String(l.message)));
    expect(restart).toMatchObject({ level: 'warn', component: 'sluice', jobId, vertex: 'Collection Source -> explode -> Sink', subtask: 0 });
    expect((restart!.err as { message: string }).message).toMatch(/boom at record 2/);
    expect(lines.find((l) => /no completed checkpoint to restore/.test(String(l.message)))).toMatchObject({ level: 'info', jobId });
    const failed = lines.at(-1)!;
    expect(failed).toMatchObject({ level: 'error', jobId });
    expect(failed.message).toMatch(/^Job [0-9a-f]{32} failed: .*boom at record 2 \(fixed-delay: 1 restart attempts exhausted\)$/);
    expect((failed.err as { stack: string }).stack).toMatch(/failing\.ts:8/);
  });

  it('plain: `[sluice] LEVEL message` lines between the command\'s own lines; --log-level warn drops the info lines', () => {
    const all = sluiceRun(...ONE_RESTART, FAILING);
    expect(all.code).toBe(1);
    expect(all.stderr).toMatch(/^Job ([0-9a-f]{32}) submitted to a local cluster of 1 TaskManager process\(es\); REST API at http:\S+$/m);
    expect(all.stderr).toMatch(/^\[sluice\] WARN job [0-9a-f]{32}: operator 'explode' in task Collection Source -> explode -> Sink \(1\/1\) failed: boom at record 2; restarting in 10 ms \(restart 1 of 1\)$/m);
    expect(all.stderr).toMatch(/^\[sluice\] INFO job [0-9a-f]{32}: no completed checkpoint to restore; starting from the beginning$/m);
    expect(all.stderr).toMatch(/^Job [0-9a-f]{32} failed: .*boom at record 2/m);
    expect(all.stderr).toMatch(/^root cause: Error: boom at record 2\n\s+at .*failing\.ts:8/m);

    const warn = sluiceRun('--log-level', 'warn', ...ONE_RESTART, FAILING);
    expect(warn.code).toBe(1);
    expect(warn.stderr).toMatch(/^\[sluice\] WARN job [0-9a-f]{32}: .*restarting in 10 ms/m);
    expect(warn.stderr).not.toMatch(/ INFO /);
    expect(warn.stderr).not.toMatch(/no completed checkpoint/);
    // The command's own lines are not log lines: the outcome is always said.
    expect(warn.stderr).toMatch(/^Job [0-9a-f]{32} failed: /m);
  });

  it('a bad --log-level is a usage error naming the levels', () => {
    const r = sluiceRun('--log-level', 'loud', FAILING);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--log-level: .*expected one of debug, info, warn, error/);
  });
});

describe('sluice cluster run --log-format json', () => {
  it('the JobManager and its TaskManager processes write JSON lines: registration, the failed task (vertex, subtask) and the restart', async () => {
    const cluster = spawn(process.execPath, [SLUICE_BIN, 'cluster', 'run', '--taskmanagers', '1', '--rpc-port', '0', '--rest-port', '0', '--log-format', 'json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    cluster.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((r) => cluster.once('exit', r));
    try {
      const rest = await new Promise<string>((resolve, reject) => {
        let out = '';
        cluster.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /cluster ready: rpc \S+ rest http:\/\/(\S+)/.exec(out);
          if (m !== null) resolve(m[1]!);
        });
        cluster.once('exit', (code) => reject(new Error(`the cluster exited (${code}):\n${stderr}`)));
      });
      const jobId = await submitJob(rest, FAILING, [], ['-p', '1', '-D', 'restart-strategy.fixed-delay.attempts=1', '-D', 'restart-strategy.fixed-delay.delay=10ms']);
      for (;;) {
        const { state } = await restGet<{ state: string }>(rest, `/jobs/${jobId}`);
        if (state === 'FAILED') break;
        await sleep(100);
      }
      // The JobManager logs the job's end after its state changed; the lines are read whole once the cluster has exited.
      while (!stderr.includes(`job ${jobId} failed`)) await sleep(50);
      cluster.kill('SIGTERM');
      await exited;
      const lines = jsonLines(stderr);
      expect(lines.find((l) => l.component === 'taskmanager' && /registered at the JobManager/.test(String(l.message)))).toMatchObject({ level: 'info', taskManager: 'tm-0' });
      expect(lines.find((l) => l.component === 'jobmanager' && /TaskManager tm-0 registered/.test(String(l.message)))).toMatchObject({ level: 'info', taskManager: 'tm-0' });
      // Each attempt's task failed on the TaskManager, which says so with the task's fields.
      const taskFailures = lines.filter((l) => l.component === 'taskmanager' && /explode.*failed/.test(String(l.message)));
      expect(taskFailures.map((l) => l.attempt)).toEqual([0, 1]);
      for (const l of taskFailures) expect(l).toMatchObject({ level: 'info', jobId, vertex: 'Collection Source -> explode -> Sink', subtask: 0, taskManager: 'tm-0' });
      expect(lines.find((l) => /restarting in 10 ms/.test(String(l.message)))).toMatchObject({ level: 'warn', component: 'jobmanager', jobId, vertex: 'Collection Source -> explode -> Sink', subtask: 0 });
      expect(lines.find((l) => String(l.message).startsWith(`job ${jobId} failed: `))).toMatchObject({ level: 'error', component: 'jobmanager', jobId });
    } finally {
      if (cluster.exitCode === null && cluster.signalCode === null) cluster.kill('SIGTERM');
      await exited;
    }
  });
});
