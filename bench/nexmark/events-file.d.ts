import type { NexmarkConfig, NexmarkEvent } from 'sluice/connectors';

export declare function writeEventsFile(path: string, count: number, config?: Partial<NexmarkConfig>): Promise<void>;
export declare function readEventsFile(path: string): NexmarkEvent[];
export declare function writeSideInputFile(path: string): void;
export declare const SIDE_INPUT_KEYS: number;
