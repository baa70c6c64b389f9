import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/** Workers of the first group (unit and type tests): at least two. */
const unitWorkers = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/kafka-*.test.ts'],
          // vitest's default is one worker per core but one, so a 2-core machine ran the files
          // one at a time (~12.5 min a pass). These run two at a time (~8 min), then the Kafka
          // files alone, one at a time, as before: kafka-sink-fencing, which holds a producer's
          // InitProducerId to force an interleaving, once hung past its 60 s timeout while
          // sharing the machine with a unit test file (2026-12-04; not reproduced since, and it
          // now prints its steps and the job's log when it fails). Tests that share the machine
          // decide by events, counts and timeouts, never by a wall-clock rate or deadline.
          maxWorkers: unitWorkers,
          sequence: { groupOrder: 0 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
        },
      },
      {
        // Tests against real Kafka brokers, started by the globalSetup only when these tests run.
        test: {
          name: 'kafka',
          include: ['test/kafka-*.test.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
          globalSetup: ['test/global-setup-kafka.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
        },
      },
      {
        test: {
          name: 'types',
          include: [],
          maxWorkers: unitWorkers,
          sequence: { groupOrder: 0 },
          typecheck: { enabled: true, only: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
        },
      },
    ],
  },
});
