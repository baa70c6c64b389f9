import { describe, expect, it } from 'vitest';
import { TaskScheduler, type Schedulable } from './task-scheduler.js';

describe('TaskScheduler', () => {
  it('runs afterSlice after every slice, before the next task runs', async () => {
    const log: string[] = [];
    const scheduler = new TaskScheduler(5, () => log.push('after'));
    const task = (name: string, slices: number): Schedulable => {
      let left = slices;
      return {
        scheduled: false,
        runSlice: () => {
          log.push(name);
          return --left > 0;
        },
      };
    };
    scheduler.wake(task('a', 2));
    scheduler.wake(task('b', 1));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['a', 'after', 'b', 'after', 'a', 'after']);
  });

  it('with a round budget of 0 lets the event loop run between passes (network input is read between them)', async () => {
    const log: string[] = [];
    const scheduler = new TaskScheduler(0);
    let left = 3;
    const task: Schedulable = {
      scheduled: false,
      runSlice: () => {
        log.push('slice');
        // What a socket delivers while the slice runs: handled in the next turn of the event loop.
        setImmediate(() => log.push('io'));
        return --left > 0;
      },
    };
    scheduler.wake(task);
    while (left > 0) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setTimeout(r, 1));
    expect(log).toEqual(['slice', 'io', 'slice', 'io', 'slice', 'io']);
    // A longer budget runs the three slices in one turn: the input waits for all of them.
    log.length = 0;
    left = 3;
    new TaskScheduler(1000).wake(task);
    while (left > 0) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setTimeout(r, 1));
    expect(log).toEqual(['slice', 'slice', 'slice', 'io', 'io', 'io']);
  });
});
