import type { StreamTask } from '../task/stream-task.js';

/**
 * A canceled attempt's tasks that did not close their operators within
 * `task.cancellation.timeout` (Flink's name and default, 180 s; 0: no limit). Their operators
 * may still be acting on external systems (a sink writer's requests), so the job must not
 * start its next attempt alongside them: Flink's TaskManager fails fatally (and its process
 * ends); the embedded runtime fails the job instead of restarting it.
 */
export class TaskCancellationTimeoutError extends Error {
  constructor(
    readonly taskNames: readonly string[],
    readonly timeoutMs: number,
  ) {
    super(
      `task(s) ${taskNames.join(', ')} did not close within task.cancellation.timeout (${timeoutMs} ms) of being canceled: ` +
        'their operators (an open, a close or a checkpoint commit that does not end) may still act on external systems, so the job ' +
        'does not start again alongside them; find the operator that hangs, or raise task.cancellation.timeout (0: wait for ever)',
    );
    this.name = 'TaskCancellationTimeoutError';
  }
}

/** Resolves when every task closed; rejects with TaskCancellationTimeoutError after `timeoutMs` (0: waits for ever). */
export async function awaitTasksClosed(tasks: readonly Pick<StreamTask, 'closed' | 'name'>[], timeoutMs: number): Promise<void> {
  const open = new Set(tasks);
  const all = Promise.all(tasks.map((t) => t.closed.then(() => void open.delete(t))));
  if (timeoutMs <= 0) {
    await all;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TaskCancellationTimeoutError([...open].map((t) => t.name), timeoutMs)), timeoutMs);
  });
  try {
    await Promise.race([all, expired]);
  } finally {
    clearTimeout(timer);
  }
}
