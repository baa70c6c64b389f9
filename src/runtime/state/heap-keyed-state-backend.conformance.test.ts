import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { describeKeyedStateBackend } from './keyed-state-backend.conformance.js';

const heap = { name: 'hashmap', create: (range, maxP, nowMs) => new HeapKeyedStateBackend(range, maxP, nowMs) } as const satisfies Parameters<typeof describeKeyedStateBackend>[0];

// Every test again with the suite's snapshots taken as incremental chains and as changelog segments.
for (const mode of ['full', 'incremental', 'changelog'] as const) describeKeyedStateBackend(heap, [], mode);
