import { MetricGroup, type MetricSample } from './metric-group.js';

export interface MetricRegistryOptions {
  /** Wall clock for meters (default Date.now). */
  readonly nowMs?: () => number;
  /** How often meters are sampled while started (default 1 s). */
  readonly tickIntervalMs?: number;
}

/**
 * The metrics of one process (the JobManager, later each TaskManager): root groups, and
 * collectors that keep them in step with the runtime (a job's tasks change at each restart).
 * `/metrics` renders `collect()` in Prometheus' text format; the REST metric queries filter it.
 */
export class MetricRegistry {
  private readonly roots = new Set<MetricGroup>();
  private readonly collectors = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private readonly nowMs: () => number;

  constructor(private readonly o: MetricRegistryOptions = {}) {
    this.nowMs = o.nowMs ?? Date.now;
  }

  /** A root group with an absolute scope (e.g. ['jobmanager', 'job']) and its variables. */
  addGroup(scope: readonly string[], variables: Readonly<Record<string, string>>): MetricGroup {
    const g = new MetricGroup(scope, variables);
    this.roots.add(g);
    return g;
  }

  removeGroup(group: MetricGroup): void {
    group.close();
    this.roots.delete(group);
  }

  /** Runs before every tick and collection; returns a function that removes it. */
  addCollector(sync: () => void): () => void {
    this.collectors.add(sync);
    return () => this.collectors.delete(sync);
  }

  /** Samples every meter now (the timer does it every second while started). */
  tick(): void {
    for (const c of this.collectors) c();
    const now = this.nowMs();
    for (const g of this.roots) g.tick(now);
  }

  collect(): MetricSample[] {
    for (const c of this.collectors) c();
    const samples: MetricSample[] = [];
    for (const g of this.roots) g.collect(samples);
    return samples;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.o.tickIntervalMs ?? 1000);
    this.timer.unref();
  }

  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
