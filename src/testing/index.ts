/** Sluice's test utilities for job authors (`sluice/testing`). */
export {
  ProcessFunctionTestHarnesses,
  OneInputHarness,
  HarnessSnapshot,
  type HarnessOptions,
  type HarnessOutput,
} from './process-function-test-harness.js';
