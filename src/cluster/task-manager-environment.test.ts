import { describe, expect, it } from 'vitest';
import { TASK_MANAGER_MALLOC_ENV, TASK_MANAGER_SEMI_SPACE_MB, taskManagerEnvironment, taskManagerNodeArgs } from './task-manager-environment.js';

describe('TaskManager Node.js options', () => {
  it('a larger young generation unless the configured options set one; the configured options are kept in order', () => {
    const young = [`--max-semi-space-size=${TASK_MANAGER_SEMI_SPACE_MB}`, `--min-semi-space-size=${TASK_MANAGER_SEMI_SPACE_MB}`];
    expect(taskManagerNodeArgs('')).toEqual(young);
    expect(taskManagerNodeArgs(' --max-old-space-size=8192  --cpu-prof ')).toEqual([...young, '--max-old-space-size=8192', '--cpu-prof']);
    expect(taskManagerNodeArgs('--max-semi-space-size=16')).toEqual(['--max-semi-space-size=16']);
    expect(taskManagerNodeArgs('--min_semi_space_size=8')).toEqual(['--min_semi_space_size=8']);
  });
});

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
