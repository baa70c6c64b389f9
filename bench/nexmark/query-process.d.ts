export interface QueryRunResult {
  readonly query: string;
  readonly parallelism: number;
  readonly events: number;
  /** The run's time: Sluice's env.execute, Flink's net job runtime. */
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly outputRecords: number;
  /** CPU time of the whole process during the run. */
  readonly cpuSeconds: number;
  readonly digest?: string;
}

export declare class QueryProcess {
  static sluice(options?: { node?: string; heapMb?: number }): QueryProcess;
  load(eventsFile: string): Promise<{ loaded: number; ms: number }>;
  run(query: string, parallelism: number, options?: { sideInput?: string; output?: string; filesDir?: string }): Promise<QueryRunResult>;
  stop(): Promise<void>;
}
