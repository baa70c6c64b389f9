import type { MetricSample } from './metric-group.js';

/**
 * Flink's MetricFetcher: the JobManager's REST metric queries read the task and operator
 * metrics that live on the TaskManagers through `fetch`, at most once per
 * `updateIntervalMs` per job (`metrics.fetcher.update-interval`); queries in between get the
 * samples of the last fetch, and concurrent ones share a fetch in flight.
 */
export class MetricFetcher {
  private readonly cache = new Map<string, { readonly atMs: number; readonly samples: Promise<MetricSample[]> }>();

  constructor(
    private readonly fetch: (jobId: string) => Promise<MetricSample[]>,
    private readonly updateIntervalMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  samples(jobId: string): Promise<MetricSample[]> {
    const now = this.nowMs();
    const cached = this.cache.get(jobId);
    if (cached !== undefined && now - cached.atMs < this.updateIntervalMs) return cached.samples;
    // A failed fetch is an empty answer, and not kept.
    const samples = this.fetch(jobId).catch(() => {
      this.cache.delete(jobId);
      return [];
    });
    this.cache.set(jobId, { atMs: now, samples });
    return samples;
  }

  forget(jobId: string): void {
    this.cache.delete(jobId);
  }
}
