import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { Sink, SinkWriter } from '../src/api/sink.js';
import { GeneratorSource } from '../src/connectors/generator/generator-source.js';

/**
 * A failing operator is named in the job's failure, also when it is not the head of its chain
 * and fails outside processElement: opening, an asynchronous write, a checkpoint hook, a
 * commit. (Such failures were blamed on the chain's head, the source.)
 */
async function failureOf(writer: () => SinkWriter<number>, checkpoints = false): Promise<string> {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': 1,
    'restart-strategy.type': 'none',
    ...(checkpoints ? { 'execution.checkpointing.interval': 20 } : {}),
  });
  const sink: Sink<number> = { createWriter: () => writer() };
  // With checkpoints the source does not end: the job runs until the failure.
  env
    .fromSource(new GeneratorSource<number>(checkpoints ? { generate: (i) => i, eventsPerSecond: 20_000 } : { generate: (i) => i, count: 100 }), 'numbers')
    .map((n) => n * 2, 'double')
    .sinkTo(sink, 'bad-sink');
  try {
    await env.executeAsync(undefined, { log: () => {} }).result;
  } catch (e) {
    return String(e);
  }
  throw new Error('the job finished; it should have failed');
}

describe('a failure names the operator that failed', () => {
  it('a sink that fails to open', async () => {
    const message = await failureOf(() => {
      throw new Error('no connection');
    });
    expect(message).toMatch(/operator 'bad-sink' failed to open: no connection/);
  });

  it('an asynchronous write that fails', async () => {
    const message = await failureOf(() => ({ write: (n) => (n > 50 ? Promise.reject(new Error('write refused')) : Promise.resolve()) }));
    expect(message).toMatch(/operator 'bad-sink' in task .*failed: write refused/);
  });

  it('a flush at the end of input that fails', async () => {
    const message = await failureOf(() => ({ write: () => {}, flush: () => Promise.reject(new Error('flush refused')) }));
    expect(message).toMatch(/operator 'bad-sink' in task .*failed: flush refused/);
  });

  it('a pre-commit at a checkpoint that fails', async () => {
    const message = await failureOf(() => ({ write: () => {}, prepareCommit: () => Promise.reject(new Error('prepare refused')) }), true);
    // The subtask declines the checkpoint; with no tolerable failed checkpoints the job fails, saying why.
    expect(message).toMatch(/Exceeded checkpoint tolerable failure threshold\. The latest checkpoint \(\d+\) failed due to declined by numbers -> double -> bad-sink \(1\/1\): asynchronous part of operator 'bad-sink' failed: prepare refused/);
  });

  it('a commit that fails', async () => {
    const message = await failureOf(() => ({
      write: () => {},
      notifyCheckpointComplete: () => {
        throw new Error('commit refused');
      },
    }), true);
    expect(message).toMatch(/operator 'bad-sink' in task .*failed: commit refused/);
  });
});
