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

/** Flink's ResourceProfileInfo of a TaskManager's slots: CPU cores and memory in MiB (Sluice does not budget memory: 0). */
function resourceProfileJson(slots: number, cpuCores: number): Record<string, unknown> {
  return { cpuCores: slots === 0 ? 0 : cpuCores, taskHeapMemory: 0, taskOffHeapMemory: 0, managedMemory: 0, networkMemory: 0, extendedResources: {} };
}

/**
 * A TaskManager as Flink's `/taskmanagers` lists it (TaskManagerInfo): Sluice's fields plus
 * what Flink's class needs, with Flink's neutral values where Sluice has no such notion
 * (memory budgets, resource profiles).
 */
export function flinkTaskManagerJson(tm: TaskManagerInfo): Record<string, unknown> {
  const { metrics: _m, ...base } = tm;
  const used = tm.slotsNumber - tm.freeSlots;
  return {
    ...base,
    assignedTasks: used,
    totalResource: resourceProfileJson(tm.slotsNumber, tm.hardware.cpuCores),
    freeResource: resourceProfileJson(tm.freeSlots, tm.hardware.cpuCores),
    memoryConfiguration: {
      frameworkHeap: 0,
      taskHeap: 0,
      frameworkOffHeap: 0,
      taskOffHeap: 0,
      networkMemory: 0,
      managedMemory: 0,
      jvmMetaspace: 0,
      jvmOverhead: 0,
      totalFlinkMemory: 0,
      totalProcessMemory: tm.hardware.physicalMemory,
    },
    blocked: false,
  };
}

/** `/taskmanagers/:id` (TaskManagerDetailsInfo): the above, its heap figures as Flink's metrics (the rest 0), no slot details. */
export function flinkTaskManagerDetailsJson(tm: TaskManagerInfo): Record<string, unknown> {
  const m = tm.metrics ?? {};
  return {
    ...flinkTaskManagerJson(tm),
    metrics: {
      ...m,
      heapUsed: m.heapUsed ?? 0,
      heapCommitted: m.heapCommitted ?? 0,
      heapMax: m.heapMax ?? 0,
      nonHeapUsed: m.nonHeapUsed ?? 0,
      nonHeapCommitted: 0,
      nonHeapMax: 0,
      directCount: 0,
      directUsed: 0,
      directMax: 0,
      mappedCount: 0,
      mappedUsed: 0,
      mappedMax: 0,
      memorySegmentsAvailable: 0,
      memorySegmentsTotal: 0,
      nettyShuffleMemorySegmentsAvailable: 0,
      nettyShuffleMemorySegmentsUsed: 0,
      nettyShuffleMemorySegmentsTotal: 0,
      nettyShuffleMemoryAvailable: 0,
      nettyShuffleMemoryUsed: 0,
      nettyShuffleMemoryTotal: 0,
      garbageCollectors: [],
    },
    allocatedSlots: [],
  };
}
