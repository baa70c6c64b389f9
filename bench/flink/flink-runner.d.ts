import type { QueryProcess } from '../nexmark/query-process.js';

export declare const FlinkRunner: {
  start(options?: { heap?: string; log?: (message: string) => void }): QueryProcess;
};
