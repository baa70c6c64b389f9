import { describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../api/environment.js';
import { CollectSink } from '../connectors/collect-sink.js';
import { subtaskKey } from '../runtime/checkpoint/state-persistence.js';
import { ClusterAttempt, CONSEQUENCE_GRACE_MS } from './cluster-deployer.js';
import { serializeError, type JobManagerMessage, type TaskManagerMessage } from './control-messages.js';
import { DataConnectionLost } from './network/data-endpoint.js';
import { RegisteredTaskManager } from './task-manager-registry.js';
import type { Connection } from './wire/connection.js';

/** An attempt of source -> rebalance -> sink at parallelism 2, on two TaskManagers that take any message. */
function attempt(): { attempt: ClusterAttempt; tms: RegisteredTaskManager[]; failures: Error[] } {
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
  env.fromElements(1, 2, 3).rebalance().sinkTo(new CollectSink<number>(), 'sink');
  const graph = env.getJobGraph('blame');
  const conn = { send: () => {} } as unknown as Connection<JobManagerMessage, TaskManagerMessage>;
  const tms = [0, 1].map((i) => new RegisteredTaskManager(`tm-${i}`, 2, '127.0.0.1', 7000 + i, 100 + i, conn, undefined));
  const placement = new Map<string, RegisteredTaskManager>();
  for (const v of graph.vertices) for (let i = 0; i < v.parallelism; i++) placement.set(subtaskKey(v.id, i), tms[i]!);
  const failures: Error[] = [];
  const a = new ClusterAttempt(
    'job',
    { attemptNumber: 0, graph, restore: undefined, splits: new Map(), requestSplit: () => {},
    reportWatermark: () => {}, checkpointing: undefined, fail: (e) => failures.push(e) },
    placement,
    tms,
    () => {},
  );
  return { attempt: a, tms, failures };
}

const failed = (vertex: number, subtask: number, error: Error): TaskManagerMessage => ({
  t: 'task-state',
  jobId: 'job',
  attempt: 0,
  subtask: [vertex, subtask],
  state: 'failed',
  error: serializeError(error, `v${vertex} (${subtask + 1}/2)`),
});

describe('ClusterAttempt: the cause of a failure, not its consequence', () => {
  it('a lost data connection reported first gives way to the failure that caused it', async () => {
    const { attempt: a, tms, failures } = attempt();
    a.onMessage(tms[1]!, failed(1, 1, new DataConnectionLost('a data connection to this TaskManager closed: read ECONNRESET')));
    a.onMessage(tms[0]!, { t: 'deploy-failed', jobId: 'job', attempt: 0, error: serializeError(new Error('max_prepared_transactions = 0')) });
    await expect(a.done).rejects.toThrow(/max_prepared_transactions = 0/);
    expect(failures.map((e) => e.message)).toEqual([expect.stringMatching(/max_prepared_transactions = 0/)]);
  });

  it('a TaskManager lost after its data connection closed is the cause', async () => {
    const { attempt: a, tms } = attempt();
    a.onMessage(tms[1]!, failed(1, 1, new DataConnectionLost('the data connection to TaskManager tm-0 closed')));
    a.taskManagerLost(tms[0]!, 'its connection closed');
    await expect(a.done).rejects.toThrow(/TaskManager tm-0 .* was lost: its connection closed/);
  });

  it('a lost data connection with no other failure fails the attempt after the grace period', async () => {
    const { attempt: a, tms } = attempt();
    const t0 = performance.now();
    a.onMessage(tms[1]!, failed(1, 1, new DataConnectionLost('the data connection to TaskManager tm-0 closed')));
    await expect(a.done).rejects.toThrow(/the data connection to TaskManager tm-0 closed/);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(CONSEQUENCE_GRACE_MS - 5);
  });

  it('any other failure fails the attempt at once', async () => {
    const { attempt: a, tms } = attempt();
    let settled = false;
    a.done.catch(() => (settled = true));
    a.onMessage(tms[0]!, failed(0, 0, new Error('boom')));
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(true);
    await expect(a.done).rejects.toThrow(/boom/);
  });
});
