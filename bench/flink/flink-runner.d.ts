export interface FlinkRunResult {
  readonly query: string;
  readonly parallelism: number;
  readonly events: number;
  /** The job's net runtime (Flink's JobExecutionResult). */
  readonly seconds: number;
  readonly wallSeconds: number;
  readonly eventsPerSecond: number;
  readonly outputRecords: number;
}

export declare class FlinkRunner {
  static start(options?: { heap?: string; log?: (message: string) => void }): FlinkRunner;
  load(eventsFile: string): Promise<{ loaded: number; ms: number }>;
  run(query: string, parallelism: number, options?: { sideInput?: string; outputFile?: string }): Promise<FlinkRunResult>;
  stop(): Promise<void>;
}
