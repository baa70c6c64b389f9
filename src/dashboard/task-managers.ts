import { availableParallelism, freemem, hostname, totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';

/** One TaskManager as Flink's `/taskmanagers` lists it. */
export interface TaskManagerInfo {
  readonly id: string;
  readonly path: string;
  readonly dataPort: number;
  readonly jmxPort: number;
  readonly timeSinceLastHeartbeat: number;
  readonly slotsNumber: number;
  /** Where the TaskManager serves its own /metrics (cluster TaskManagers). */
  readonly metricsUrl?: string;
  readonly freeSlots: number;
  readonly hardware: { readonly cpuCores: number; readonly physicalMemory: number; readonly freeMemory: number; readonly managedMemory: number };
  /** Heap and process memory, as in Flink's `/taskmanagers/:id` `metrics`. */
  readonly metrics?: Readonly<Record<string, number>>;
}

/** The id of the TaskManager of the embedded runtime (this process). */
export const EMBEDDED_TASK_MANAGER_ID = `embedded-${hostname()}-${process.pid}`;

/** The embedded runtime as one TaskManager with one slot: this process. */
export function embeddedTaskManager(runningJobs: number): TaskManagerInfo {
  const heap = getHeapStatistics();
  const mem = process.memoryUsage();
  return {
    id: EMBEDDED_TASK_MANAGER_ID,
    path: `embedded://${hostname()}/${process.pid}`,
    dataPort: -1,
    jmxPort: -1,
    timeSinceLastHeartbeat: Date.now(),
    slotsNumber: 1,
    freeSlots: runningJobs > 0 ? 0 : 1,
    hardware: { cpuCores: availableParallelism(), physicalMemory: totalmem(), freeMemory: freemem(), managedMemory: 0 },
    metrics: {
      heapUsed: mem.heapUsed,
      heapCommitted: mem.heapTotal,
      heapMax: heap.heap_size_limit,
      nonHeapUsed: mem.external + mem.arrayBuffers,
      rss: mem.rss,
    },
  };
}
