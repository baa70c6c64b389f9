import { describe, expect, it } from 'vitest';
import { TASK_MANAGER_MALLOC_ENV, taskManagerEnvironment } from './task-manager-environment.js';

describe('TaskManager environment', () => {
  it("adds glibc's malloc settings where the parent has none; the parent's own settings and the extras win", () => {
    const env = taskManagerEnvironment({ PATH: '/bin', MALLOC_TRIM_THRESHOLD_: '0' }, { SLUICE_PARENT_PID: '42' });
    expect(env.PATH).toBe('/bin');
    expect(env.MALLOC_TRIM_THRESHOLD_).toBe('0'); // the user's choice stays
    expect(env.MALLOC_MMAP_THRESHOLD_).toBe(String(64 << 20));
    expect(env.SLUICE_PARENT_PID).toBe('42');
    expect(Object.keys(TASK_MANAGER_MALLOC_ENV).every((k) => /^MALLOC_[A-Z_]+_$/.test(k))).toBe(true); // glibc's tunable names end in '_'
  });
});
