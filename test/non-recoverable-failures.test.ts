import { describe, expect, it } from 'vitest';
import { JobExecutionError, NonRecoverableError, nonRecoverable, StreamExecutionEnvironment } from '../src/index.js';
import type { Sink } from '../src/api/sink.js';
import { numberSource } from '../src/connectors/generator/sources.js';

/**
 * Failures a restart cannot fix fail the job at once, whatever the restart strategy (Flink's
 * NonRecoverableError); others restart as the strategy allows, and a restart loop of one cause
 * logs the cause once in full, then a count.
 */

/** Five restarts allowed, 1 ms apart: a job that fails must have been told not to restart. */
function restartingEnv(): StreamExecutionEnvironment {
  return StreamExecutionEnvironment.create({
    'parallelism.default': 1,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 5,
    'restart-strategy.fixed-delay.delay': 1,
  });
}

/** A sink whose writer is created once per attempt and throws `failure()` at the first record. */
function failingSink(attempts: { count: number }, failure: () => unknown): Sink<number> {
  return {
    createWriter: () => {
      attempts.count++;
      return {
        write: () => {
          throw failure();
        },
      };
    },
  };
}

async function run(env: StreamExecutionEnvironment, log: string[]): Promise<Error> {
  try {
    await env.executeAsync(undefined, { log: (m) => log.push(m) }).result;
  } catch (e) {
    return e as Error;
  }
  throw new Error('the job finished; it should have failed');
}

describe('non-recoverable failures fail the job at once', () => {
  it('job code that throws nonRecoverable(e) or a NonRecoverableError is not restarted; the message says why', async () => {
    for (const failure of [() => nonRecoverable(new Error('the API key was refused')), () => new NonRecoverableError('the API key was refused')]) {
      const env = restartingEnv();
      const attempts = { count: 0 };
      env.fromSource(numberSource({ count: 10 }), 'numbers').sinkTo(failingSink(attempts, failure), 'api-sink');
      const log: string[] = [];
      const e = await run(env, log);
      expect(e).toBeInstanceOf(JobExecutionError);
      expect(e.message).toMatch(/failed: .*the API key was refused \(not restarted: a restart cannot fix this failure\)$/);
      expect(attempts.count).toBe(1);
      expect(log.filter((l) => /restarting in/.test(l))).toEqual([]);
    }
  });

  it('a recoverable failure restarts as the strategy allows; its repetitions are logged as a count, without the strategy\'s internals', async () => {
    const env = restartingEnv();
    const attempts = { count: 0 };
    env.fromSource(numberSource({ count: 10 }), 'numbers').sinkTo(
      failingSink(attempts, () => new Error(`connect ECONNREFUSED 127.0.0.1:${attempts.count}`)),
      'flaky-sink',
    );
    const log: string[] = [];
    const e = await run(env, log);
    expect(attempts.count).toBe(6);
    expect(e.message).toMatch(/connect ECONNREFUSED 127\.0\.0\.1:6 \(fixed-delay: 5 restart attempts exhausted\)$/);
    const restarts = log.filter((l) => /restarting in/.test(l));
    expect(restarts).toHaveLength(5);
    expect(restarts[0]).toMatch(/: operator 'flaky-sink' .*failed: connect ECONNREFUSED 127\.0\.0\.1:1; restarting in 1 ms \(restart 1 of 5\)$/);
    for (let i = 1; i < 5; i++) {
      expect(restarts[i]).toMatch(new RegExp(`: failed again with the same cause \\(${i + 1} times since \\d\\d:\\d\\d:\\d\\d\\); restarting in 1 ms \\(restart ${i + 1} of 5\\)$`));
    }
    expect(log.join('\n')).not.toMatch(/fixed-delay\(|failures=|delayMs=/);
  });
});
