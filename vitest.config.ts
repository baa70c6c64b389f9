import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // vitest's default is one worker per core but one, so a 2-core machine ran the files one
    // at a time (~12.5 min a pass); two at a time take ~8.5 min. The cluster and Kafka tests
    // decide by events and timeouts, not by wall-clock deadlines, so they tolerate sharing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/kafka-*.test.ts'],
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
          typecheck: { enabled: true, only: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
        },
      },
    ],
  },
});
