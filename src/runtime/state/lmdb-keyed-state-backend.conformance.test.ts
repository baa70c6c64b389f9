import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { describeKeyedStateBackend } from './keyed-state-backend.conformance.js';
import { LmdbKeyedStateBackend } from './lmdb-keyed-state-backend.js';

const heap = { name: 'hashmap', create: (range, maxP, nowMs) => new HeapKeyedStateBackend(range, maxP, nowMs) } as const satisfies Parameters<typeof describeKeyedStateBackend>[0];

// Every test again with the suite's snapshots taken as incremental chains and as changelog segments.
for (const mode of ['full', 'incremental', 'changelog'] as const) {
  describeKeyedStateBackend({ name: 'lmdb', create: (range, maxP, nowMs) => new LmdbKeyedStateBackend(range, maxP, nowMs) }, [heap], mode);
  // A cache of 3 entries: nearly every access misses, evicts and flushes, so the store path is what is tested.
  describeKeyedStateBackend({ name: 'lmdb (3-entry cache)', create: (range, maxP, nowMs) => new LmdbKeyedStateBackend(range, maxP, nowMs, { cacheEntriesMax: 3 }) }, [heap], mode);
}

// Full snapshots spilled to a file key group by key group (hold), written to checkpoint storage and read back.
describeKeyedStateBackend({ name: 'lmdb', create: (range, maxP, nowMs) => new LmdbKeyedStateBackend(range, maxP, nowMs) }, [heap], 'written');
