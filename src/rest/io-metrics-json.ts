import type { TaskView } from '../runtime/deploy/deployer.js';

/**
 * Flink's IOMetricsInfo (`metrics` of a vertex, a subtask, a TaskManager's share of a vertex)
 * from the tasks it covers. Sluice counts records and back-pressured time, not bytes nor
 * busy or idle time: those are Flink's neutral values (0, not complete), as Flink reports a
 * metric it has not received.
 */
export function ioMetricsJson(tasks: readonly TaskView[]): Record<string, number | boolean> {
  const complete = tasks.length > 0 && tasks.every((t) => t.state === 'finished');
  return {
    'read-bytes': 0,
    'read-bytes-complete': false,
    'write-bytes': 0,
    'write-bytes-complete': false,
    'read-records': tasks.reduce((a, t) => a + t.recordsIn, 0),
    'read-records-complete': complete,
    'write-records': tasks.reduce((a, t) => a + t.recordsOut(), 0),
    'write-records-complete': complete,
    'accumulated-backpressured-time': tasks.reduce((a, t) => a + t.backPressuredTimeMsTotal(), 0),
    'accumulated-idle-time': 0,
    'accumulated-busy-time': 0,
  };
}

/** Flink's AggregatedTaskDetailsInfo (`aggregated` of a vertex): each IO metric and state duration over the subtasks. */
export function aggregatedTaskDetailsJson(perSubtask: readonly Record<string, number | boolean>[], statusDurations: readonly Record<string, number>[]): Record<string, unknown> {
  const stats = (values: number[]): Record<string, number> => {
    if (values.length === 0) return { min: 0, max: 0, avg: 0, sum: 0, median: 0, p25: 0, p75: 0, p95: 0 };
    const s = [...values].sort((a, b) => a - b);
    const q = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
    const sum = s.reduce((a, b) => a + b, 0);
    return { min: s[0]!, max: s[s.length - 1]!, avg: Math.round(sum / s.length), sum, median: q(0.5), p25: q(0.25), p75: q(0.75), p95: q(0.95) };
  };
  const metricNames = ['read-bytes', 'write-bytes', 'read-records', 'write-records', 'accumulated-backpressured-time', 'accumulated-idle-time', 'accumulated-busy-time'];
  const metrics = Object.fromEntries(metricNames.map((n) => [n, stats(perSubtask.map((m) => Number(m[n] ?? 0)))]));
  const states = [...new Set(statusDurations.flatMap((d) => Object.keys(d)))];
  const durations = Object.fromEntries(states.map((st) => [st, stats(statusDurations.map((d) => d[st] ?? 0))]));
  return { metrics, 'status-duration': durations };
}
