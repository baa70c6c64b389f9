import type { StreamExecutionEnvironment } from './environment.js';

const JOB_MARK = Symbol.for('sluice.job');

/** What a job module exports by default. */
export interface JobDefinition {
  readonly [JOB_MARK]: true;
  readonly build: (env: StreamExecutionEnvironment, args: readonly string[]) => void | Promise<void>;
}

/**
 * Declares a job: the function receives the environment and the job's command-line
 * arguments and builds the dataflow; `sluice run` executes it.
 *
 *   export default defineJob((env) => {
 *     env.fromSource(numbers({ count: 100 }), 'numbers').map((n) => n * 2).sinkTo(new PrintSink());
 *   });
 */
export function defineJob(build: (env: StreamExecutionEnvironment, args: readonly string[]) => void | Promise<void>): JobDefinition {
  if (typeof build !== 'function') throw new TypeError('defineJob needs a function (env, args) => { ... }');
  return { [JOB_MARK]: true, build };
}

export function isJobDefinition(x: unknown): x is JobDefinition {
  return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[JOB_MARK] === true;
}
