import { MeterView } from './meter-view.js';

/** What a metric reads: a number (a boolean gauge reads 1 or 0). */
export type MetricKind = 'counter' | 'gauge' | 'meter';

/** A counter a component increments (Flink's Counter). */
export class Counter {
  count = 0;
  inc(n = 1): void {
    this.count += n;
  }
}

interface Metric {
  readonly kind: MetricKind;
  read(): number;
}

/** One metric's value with where it lives: Flink's logical scope and its variables (labels). */
export interface MetricSample {
  /** Logical scope, e.g. ['taskmanager', 'job', 'task', 'operator']. */
  readonly scope: readonly string[];
  /** Label name to value: job_id, task_name, subtask_index, operator_name, topic, ... */
  readonly variables: Readonly<Record<string, string>>;
  readonly name: string;
  readonly kind: MetricKind;
  readonly value: number;
}

const meterWindowMsDefault = 5_000;

/**
 * A named place for metrics, as Flink's MetricGroup: `addGroup(name)` adds a component to the
 * scope, `addGroup(key, value)` adds the component `key` and the variable `key=value` (a
 * Prometheus label). Metrics are read when they are collected, never pushed.
 *
 * Sources get one in their reader context (`SourceReaderContext.metricGroup`), scoped to the
 * source operator, e.g. Kafka lag per partition:
 * `ctx.metricGroup?.addGroup('KafkaSourceReader').addGroup('topic', t).addGroup('partition', String(p)).gauge('recordsLag', () => lag)`.
 */
export class MetricGroup {
  private readonly metrics = new Map<string, Metric>();
  private readonly children: MetricGroup[] = [];
  private readonly meters: { view: MeterView; count: () => number }[] = [];
  private closed = false;

  constructor(
    /** Scope components relative to where the group is mounted. */
    readonly scope: readonly string[] = [],
    readonly variables: Readonly<Record<string, string>> = {},
    private readonly meterWindowMs = meterWindowMsDefault,
  ) {}

  /** A named child group, or a key-value child group when `value` is given. */
  addGroup(name: string, value?: string): MetricGroup {
    const existing = this.children.find((c) => c.scope.length === 1 && c.scope[0] === name && (value === undefined ? Object.keys(c.variables).length === 0 : c.variables[name] === value));
    if (existing !== undefined) return existing;
    const child = new MetricGroup([name], value === undefined ? {} : { [name]: value }, this.meterWindowMs);
    this.children.push(child);
    return child;
  }

  /** Mounts a group made elsewhere (a source reader's) as a child; its scope continues this one's. */
  adopt(group: MetricGroup): void {
    if (!this.children.includes(group)) this.children.push(group);
  }

  counter(name: string): Counter {
    const c = new Counter();
    this.add(name, { kind: 'counter', read: () => c.count });
    return c;
  }

  gauge(name: string, read: () => number | boolean): void {
    this.add(name, {
      kind: 'gauge',
      read: () => {
        const v = read();
        return typeof v === 'boolean' ? (v ? 1 : 0) : v;
      },
    });
  }

  /** The rate per second of a cumulative count, over the last few seconds (sampled by `tick`); returns its reader. */
  meter(name: string, count: () => number): () => number {
    const view = new MeterView(this.meterWindowMs);
    this.meters.push({ view, count });
    const rate = (): number => view.rate();
    this.add(name, { kind: 'meter', read: rate });
    return rate;
  }

  private add(name: string, metric: Metric): void {
    if (this.closed) return;
    if (this.metrics.has(name)) throw new Error(`metric '${name}' is already registered in scope ${this.scope.join('.') || '(root)'}`);
    this.metrics.set(name, metric);
  }

  /** Samples every meter of this group and its children. */
  tick(nowMs: number): void {
    for (const m of this.meters) m.view.sample(nowMs, m.count());
    for (const c of this.children) c.tick(nowMs);
  }

  /** Removes this group's metrics and children; a closed group takes no new metrics. */
  close(): void {
    this.closed = true;
    this.metrics.clear();
    this.meters.length = 0;
    for (const c of this.children) c.close();
    this.children.length = 0;
  }

  /** Every metric of this group and below, with the scope and variables of `parent` in front. */
  collect(into: MetricSample[], parentScope: readonly string[] = [], parentVariables: Readonly<Record<string, string>> = {}): void {
    const scope = [...parentScope, ...this.scope];
    const variables = { ...parentVariables, ...this.variables };
    for (const [name, m] of this.metrics) {
      let value: number;
      try {
        value = m.read();
      } catch {
        value = Number.NaN;
      }
      into.push({ scope, variables, name, kind: m.kind, value });
    }
    for (const c of this.children) c.collect(into, scope, variables);
  }
}
