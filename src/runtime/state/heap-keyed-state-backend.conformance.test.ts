import { HeapKeyedStateBackend } from './heap-keyed-state-backend.js';
import { describeKeyedStateBackend } from './keyed-state-backend.conformance.js';

describeKeyedStateBackend({ name: 'hashmap', create: (range, maxP, nowMs) => new HeapKeyedStateBackend(range, maxP, nowMs) });
