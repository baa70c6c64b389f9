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
});
