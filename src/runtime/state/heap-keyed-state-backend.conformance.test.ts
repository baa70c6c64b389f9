import { afterAll } from 'vitest';
import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { describeKeyedStateBackend } from './keyed-state-backend.conformance.js';
import { SnapshotThread } from './snapshot-thread.js';

const heap = { name: 'hashmap', create: (range, maxP, nowMs) => new HeapKeyedStateBackend(range, maxP, nowMs) } as const satisfies Parameters<typeof describeKeyedStateBackend>[0];

// Every test again with the suite's snapshots taken as incremental chains and as changelog segments.
for (const mode of ['full', 'incremental', 'changelog'] as const) describeKeyedStateBackend(heap, [], mode);

// Full snapshots assembled by the snapshot thread (a worker with a replica of each backend).
const threaded = {
  name: 'hashmap (snapshot thread)',
  create: (range, maxP, nowMs) => new HeapKeyedStateBackend(range, maxP, nowMs, SnapshotThread.shared()),
} as const satisfies Parameters<typeof describeKeyedStateBackend>[0];
describeKeyedStateBackend(threaded, [], 'full');
// The same, with the full snapshots held by the thread and written by it (hold).
describeKeyedStateBackend(threaded, [], 'written');
afterAll(() => SnapshotThread.shared().stop());
