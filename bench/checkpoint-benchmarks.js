// Fault-tolerance benchmarks: checkpoint overhead, checkpoint duration under backpressure,
// recovery time. Names and headline metrics as in /work/shared/BENCH_FORMAT.md.
//
// A benchmark run is one or more steps; each step runs in a fresh process
// (`node bench/run-one.js <name> <step>`) and prints a JSON sample. `metrics(samples)` turns
// the samples of one run into that run's metrics; bench/run.js takes the median of every
// metric over the runs.
import { StreamExecutionEnvironment, valueState } from '../dist/index.js';
import { numberSource } from '../dist/connectors/index.js';
import { LocalExecutor } from '../dist/runtime/local-executor.js';
import { FaultPlan } from '../dist/testing/fault-plan.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queries } from './queries.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Nearest-rank percentile (p in (0, 100]) of a non-empty list. */
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
}

class BenchmarkInvalid extends Error {}

function invalid(message, logs) {
  const tail = logs?.length ? `\nlast runtime log lines:\n  ${logs.slice(-20).join('\n  ')}` : '';
  throw new BenchmarkInvalid(`INVALID BENCHMARK: ${message}${tail}`);
}

const completedCheckpoints = (executor) => executor.checkpointStats.entries().filter((e) => e.status === 'COMPLETED' && !e.isSavepoint);

// ---------------------------------------------------------------------------------------------
// 1. checkpoint-overhead-{aligned,unaligned}: Nexmark q5 (keyed sliding-window counts, as the
//    nexmark-q5 benchmark) on an unbounded source, parallelism 2 in one process. The rate of
//    source records over a steady window (after a warm-up) with checkpoints every second,
//    divided by the same without checkpointing.
// ---------------------------------------------------------------------------------------------

const OVERHEAD = { parallelism: 2, intervalMs: 1000, warmupMs: 1500, measureMs: 5000 };

async function throughputStep(checkpointMode, incremental = false) {
  const config = { 'parallelism.default': OVERHEAD.parallelism };
  let dir;
  if (checkpointMode !== 'none') {
    config['execution.checkpointing.incremental'] = incremental;
    // q5's window state outgrows the 5 MB chunk limit of jobmanager storage within seconds.
    dir = mkdtempSync(join(tmpdir(), 'sluice-bench-chk-'));
    config['execution.checkpointing.interval'] = OVERHEAD.intervalMs;
    config['execution.checkpointing.unaligned.enabled'] = checkpointMode === 'unaligned';
    config['execution.checkpointing.dir'] = dir;
  }
  const env = StreamExecutionEnvironment.create(config);
  queries['nexmark-q5'].build(env, undefined); // events undefined: unbounded source
  const logs = [];
  const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: (m) => logs.push(m) });
  const running = executor.run();
  running.catch(() => {}); // awaited below
  const sample = () => {
    const cpu = process.cpuUsage();
    return { t: performance.now(), wall: Date.now(), cpuMs: (cpu.user + cpu.system) / 1000, n: executor.progress().sourceRecords };
  };
  await sleep(OVERHEAD.warmupMs);
  const a = sample();
  await sleep(OVERHEAD.measureMs);
  const b = sample();
  executor.cancel();
  let result;
  try {
    result = await running;
  } catch (e) {
    invalid(`the job failed: ${e.message}${e.cause ? ` (cause: ${e.cause.message})` : ''}`, logs);
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
  const done = completedCheckpoints(executor);
  const inWindow = done.filter((e) => e.triggerTimestampMs >= a.wall && e.latestAckTimestampMs <= b.wall);
  const out = {
    mode: checkpointMode,
    incremental,
    eventsPerSecond: ((b.n - a.n) * 1000) / (b.t - a.t),
    measuredEvents: b.n - a.n,
    measuredSeconds: (b.t - a.t) / 1000,
    // Less sensitive to other processes on the machine than wall time; counts every thread
    // of the process (GC helpers, file writes on the libuv pool) as cost.
    eventsPerCpuSecond: ((b.n - a.n) * 1000) / (b.cpuMs - a.cpuMs),
    cpuCoresUsed: (b.cpuMs - a.cpuMs) / (b.t - a.t),
    completedCheckpoints: done.length,
    completedCheckpointsInWindow: inWindow.length,
    failedCheckpoints: executor.checkpointStats.counts.failed,
    numRestarts: result.numRestarts,
    checkpointDurationsMs: done.map((e) => e.endToEndDurationMs).reverse(),
    checkpointTypes: [...new Set(done.map((e) => e.checkpointType))],
    persistedInFlightRecords: done.reduce((s, e) => s + e.persistedInFlightRecords, 0),
    stateSizeBytes: done[0]?.stateSizeBytes ?? 0,
  };
  if (result.numRestarts > 0) invalid(`the ${checkpointMode} run restarted ${result.numRestarts} time(s): throughput not comparable`, logs);
  if (checkpointMode !== 'none') {
    if (inWindow.length === 0) invalid(`no checkpoint completed within the measured window (${done.length} in all): checkpointing did not run`, logs);
    const want = checkpointMode === 'unaligned' ? 'UNALIGNED_CHECKPOINT' : 'CHECKPOINT';
    if (done.some((e) => e.checkpointType !== want)) invalid(`expected only ${want} checkpoints, got ${out.checkpointTypes.join(', ')}`, logs);
  }
  return out;
}

function overheadBenchmark(mode) {
  return {
    description: `Nexmark q5 (unbounded nexmarkSource, keyBy auction, sliding 10s/2s windows, max per window), parallelism ${OVERHEAD.parallelism} in one process; source records/s over ${OVERHEAD.measureMs / 1000} s after ${OVERHEAD.warmupMs / 1000} s warm-up, with ${mode} checkpoints every ${OVERHEAD.intervalMs} ms (full, and incremental beside it) vs. without checkpointing; each in its own process`,
    parallelism: OVERHEAD.parallelism,
    headline: ['throughputRatio'],
    target: { throughputRatio: '>= 0.95' },
    config: {
      'execution.checkpointing.interval': OVERHEAD.intervalMs,
      checkpointStorage: 'filesystem, a temporary directory under os.tmpdir() (execution.checkpointing.dir)',
      'execution.checkpointing.unaligned.enabled': mode === 'unaligned',
      warmupMs: OVERHEAD.warmupMs,
      measureMs: OVERHEAD.measureMs,
    },
    // Alternate the order between runs so drift (other load, thermal) does not favour one side.
    // The headline takes full checkpoints (Flink's default); the same with incremental ones
    // (execution.checkpointing.incremental) is reported beside it.
    steps: (run) => (run % 2 === 0 ? ['baseline', mode, `${mode}-incremental`] : [`${mode}-incremental`, mode, 'baseline']),
    runStep: (step) => (step === 'baseline' ? throughputStep('none') : throughputStep(mode, step.endsWith('-incremental'))),
    metrics: (samples) => {
      const base = samples.baseline;
      const cp = samples[mode];
      const inc = samples[`${mode}-incremental`];
      return {
        throughputRatio: cp.eventsPerSecond / base.eventsPerSecond,
        throughputRatioIncremental: inc.eventsPerSecond / base.eventsPerSecond,
        eventsPerSecondWithIncrementalCheckpoints: Math.round(inc.eventsPerSecond),
        checkpointDurationMsP50Incremental: percentile(inc.checkpointDurationsMs, 50),
        eventsPerSecondWithCheckpoints: Math.round(cp.eventsPerSecond),
        eventsPerSecondWithoutCheckpoints: Math.round(base.eventsPerSecond),
        throughputRatioPerCpuSecond: cp.eventsPerCpuSecond / base.eventsPerCpuSecond,
        eventsPerCpuSecondWithCheckpoints: Math.round(cp.eventsPerCpuSecond),
        eventsPerCpuSecondWithoutCheckpoints: Math.round(base.eventsPerCpuSecond),
        cpuCoresUsedWithCheckpoints: cp.cpuCoresUsed,
        cpuCoresUsedWithoutCheckpoints: base.cpuCoresUsed,
        completedCheckpoints: cp.completedCheckpoints,
        completedCheckpointsInWindow: cp.completedCheckpointsInWindow,
        checkpointDurationMsP50: percentile(cp.checkpointDurationsMs, 50),
        checkpointStateSizeBytes: cp.stateSizeBytes,
      };
    },
    check: (m) => {
      if (!(m.completedCheckpoints > 0)) invalid('no completed checkpoints');
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 2. checkpoint-backpressure-{aligned,unaligned}: source -> map -> rebalance -> sink that takes
//    1 ms (setTimeout) per record, parallelism 4, checkpoints every 200 ms; end-to-end
//    durations of the checkpoints completed after a warm-up (Flink's checkpointing-time
//    micro-benchmark under backpressure).
// ---------------------------------------------------------------------------------------------

const BACKPRESSURE = { parallelism: 4, intervalMs: 200, batchSize: 64, buffersPerChannel: 2, floatingBuffersPerGate: 8, sinkDelayMs: 1, warmupMs: 1000, runMs: 8000 };

/** Sink that takes ~1 ms per record: write() returns a promise resolved by setTimeout(1). */
class SleepingSink {
  count = 0;
  createWriter() {
    return {
      write: () => {
        this.count++;
        return new Promise((resolve) => setTimeout(resolve, BACKPRESSURE.sinkDelayMs));
      },
    };
  }
}

async function backpressureStep(mode) {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': BACKPRESSURE.parallelism,
    'execution.checkpointing.interval': BACKPRESSURE.intervalMs,
    'execution.checkpointing.unaligned.enabled': mode === 'unaligned',
    'execution.buffer-batch-size': BACKPRESSURE.batchSize,
    'taskmanager.network.memory.buffers-per-channel': BACKPRESSURE.buffersPerChannel,
    'taskmanager.network.memory.floating-buffers-per-gate': BACKPRESSURE.floatingBuffersPerGate,
  });
  const sink = new SleepingSink();
  env
    .fromSource(numberSource({}), 'numbers')
    .map((n) => n + 1)
    .rebalance()
    .sinkTo(sink);
  const logs = [];
  const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: (m) => logs.push(m) });
  const startWall = Date.now();
  const running = executor.run();
  running.catch(() => {});
  await sleep(BACKPRESSURE.runMs);
  executor.cancel();
  let result;
  try {
    result = await running;
  } catch (e) {
    invalid(`the job failed: ${e.message}${e.cause ? ` (cause: ${e.cause.message})` : ''}`, logs);
  }
  const all = completedCheckpoints(executor).reverse();
  const measured = all.filter((e) => e.triggerTimestampMs >= startWall + BACKPRESSURE.warmupMs);
  const durations = measured.map((e) => e.endToEndDurationMs);
  if (result.numRestarts > 0) invalid(`the job restarted ${result.numRestarts} time(s)`, logs);
  if (measured.length < 3) invalid(`only ${measured.length} checkpoint(s) completed after the warm-up (${all.length} in all)`, logs);
  const want = mode === 'unaligned' ? 'UNALIGNED_CHECKPOINT' : 'CHECKPOINT';
  if (measured.some((e) => e.checkpointType !== want)) invalid(`expected only ${want} checkpoints`, logs);
  return {
    mode,
    durationsMs: durations,
    durationMsP50: percentile(durations, 50),
    durationMsP99: percentile(durations, 99),
    completedCheckpoints: measured.length,
    failedCheckpoints: executor.checkpointStats.counts.failed,
    alignmentDurationMsMaxP50: percentile(
      measured.map((e) => e.alignmentDurationMsMax),
      50,
    ),
    persistedInFlightRecordsP50: percentile(
      measured.map((e) => e.persistedInFlightRecords),
      50,
    ),
    sinkRecordsPerSecond: (sink.count * 1000) / BACKPRESSURE.runMs,
  };
}

function backpressureBenchmark(mode) {
  return {
    description: `numberSource -> map -> rebalance -> sink sleeping ${BACKPRESSURE.sinkDelayMs} ms per record (async write, setTimeout), parallelism ${BACKPRESSURE.parallelism} in one process, ${mode} checkpoints every ${BACKPRESSURE.intervalMs} ms for ${BACKPRESSURE.runMs / 1000} s; end-to-end durations of the completed checkpoints triggered after ${BACKPRESSURE.warmupMs} ms`,
    parallelism: BACKPRESSURE.parallelism,
    headline: ['durationMsP50', 'durationMsP99'],
    target: mode === 'unaligned' ? { durationMsP50: '<= 5' } : {},
    config: {
      'execution.checkpointing.interval': BACKPRESSURE.intervalMs,
      'execution.checkpointing.unaligned.enabled': mode === 'unaligned',
      'execution.buffer-batch-size': BACKPRESSURE.batchSize,
      'taskmanager.network.memory.buffers-per-channel': BACKPRESSURE.buffersPerChannel,
      'taskmanager.network.memory.floating-buffers-per-gate': BACKPRESSURE.floatingBuffersPerGate,
      // Each of the 4 input channels of a sink subtask holds buffers-per-channel + ceil(floating / 4) batches.
      recordsQueuedPerSinkSubtaskMax:
        BACKPRESSURE.parallelism * (BACKPRESSURE.buffersPerChannel + Math.ceil(BACKPRESSURE.floatingBuffersPerGate / BACKPRESSURE.parallelism)) * BACKPRESSURE.batchSize,
      sinkDelayMs: BACKPRESSURE.sinkDelayMs,
      runMs: BACKPRESSURE.runMs,
      warmupMs: BACKPRESSURE.warmupMs,
    },
    steps: () => [mode],
    runStep: () => backpressureStep(mode),
    metrics: (samples) => {
      const s = samples[mode];
      return {
        durationMsP50: s.durationMsP50,
        durationMsP99: s.durationMsP99,
        completedCheckpoints: s.completedCheckpoints,
        alignmentDurationMsP50: s.alignmentDurationMsMaxP50,
        persistedInFlightRecordsP50: s.persistedInFlightRecordsP50,
        sinkRecordsPerSecond: Math.round(s.sinkRecordsPerSecond),
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 3. recovery-small-state: keyed count (1000 keys) over numberSource, checkpoints every 100 ms,
//    one injected failure; time from the throw to the first record the sink writes in the
//    restarted attempt.
// ---------------------------------------------------------------------------------------------

const RECOVERY = { parallelism: 2, intervalMs: 100, restartDelayMs: 0, keys: 1000, eventsPerSecond: 200_000, failAfterRecords: 300_000 };

async function recoveryStep() {
  const env = StreamExecutionEnvironment.create({
    'parallelism.default': RECOVERY.parallelism,
    'execution.checkpointing.interval': RECOVERY.intervalMs,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.attempts': 1,
    'restart-strategy.fixed-delay.delay': RECOVERY.restartDelayMs,
  });
  const plan = new FaultPlan(1, [{ kind: 'record', afterRecords: RECOVERY.failAfterRecords }]);
  const failing = plan.failingProcess();
  const marks = { failedAt: undefined, firstOutputAfterRestoreAt: undefined, attemptStartedAt: [], restartLogAt: undefined, restoreLogAt: undefined };
  let executor;
  const sink = {
    createWriter: (ctx) => ({
      write: () => {
        if (ctx.attemptNumber >= 1 && marks.firstOutputAfterRestoreAt === undefined) {
          marks.firstOutputAfterRestoreAt = performance.now();
          // Enough seen: stop the job soon (keeps the run short).
          setTimeout(() => executor.cancel(), 200);
        }
      },
    }),
  };
  env
    .fromSource(numberSource({ eventsPerSecond: RECOVERY.eventsPerSecond }), 'numbers')
    .process({
      processElement: (v, ctx, out) => {
        try {
          failing.processElement(v, ctx, out);
        } catch (e) {
          marks.failedAt = performance.now();
          throw e;
        }
      },
      snapshotState: (id) => failing.snapshotState(id),
    })
    .name('faults')
    .keyBy((n) => n % RECOVERY.keys)
    .process({
      open(ctx) {
        this.count = ctx.getState(valueState('count'));
      },
      processElement(n, ctx, out) {
        const c = (this.count.value() ?? 0) + 1;
        this.count.update(c);
        out.collect(c);
      },
    })
    .uid('count')
    .sinkTo(sink);
  const logs = [];
  executor = new LocalExecutor(env.getJobGraph(), env.config, {
    log: (m) => {
      const now = performance.now();
      if (/restarting in/.test(m)) marks.restartLogAt ??= now;
      if (/restoring from checkpoint|no completed checkpoint to restore/.test(m)) marks.restoreLogAt ??= now;
      logs.push(m);
    },
    onAttemptStarted: (a) => marks.attemptStartedAt.push(performance.now()),
  });
  const safety = setTimeout(() => executor.cancel(), 15_000);
  let result;
  try {
    result = await executor.run();
  } catch (e) {
    invalid(`the job failed: ${e.message}${e.cause ? ` (cause: ${e.cause.message})` : ''}`, logs);
  } finally {
    clearTimeout(safety);
  }
  if (result.numRestarts !== 1) invalid(`expected exactly one restart, got ${result.numRestarts}`, logs);
  if (marks.failedAt === undefined) invalid('the injected failure did not fire', logs);
  if (marks.firstOutputAfterRestoreAt === undefined) invalid('no record reached the sink after the restart', logs);
  if (executor.checkpointStats.counts.restored !== 1) invalid('the restart did not restore a checkpoint', logs);
  const f = marks.failedAt;
  const restored = executor.checkpointStats.latestRestored;
  const doneBeforeFailure = completedCheckpoints(executor).filter((e) => e.id <= restored.id);
  return {
    recoveryMs: marks.firstOutputAfterRestoreAt - f,
    // breakdown, all from the throw
    failureToRestartDecisionMs: marks.restartLogAt - f,
    failureToRestoreLoadedMs: marks.restoreLogAt - f,
    failureToAttemptStartedMs: marks.attemptStartedAt[1] - f,
    restoredCheckpointId: restored.id,
    restoredStateSizeBytes: doneBeforeFailure[0]?.stateSizeBytes ?? 0,
    completedCheckpointsBeforeFailure: doneBeforeFailure.length,
  };
}

const recoveryBenchmark = {
  description: `keyed count (${RECOVERY.keys} keys, ValueState) over numberSource (${RECOVERY.eventsPerSecond} events/s), parallelism ${RECOVERY.parallelism}, checkpoints every ${RECOVERY.intervalMs} ms, one failure thrown by a pass-through function after ${RECOVERY.failAfterRecords} records; recoveryMs = performance.now() at the first sink write of attempt 1 minus performance.now() at the throw (includes the restart delay)`,
  parallelism: RECOVERY.parallelism,
  headline: ['recoveryMs'],
  target: { recoveryMs: '<= 500' },
  config: {
    'execution.checkpointing.interval': RECOVERY.intervalMs,
    'restart-strategy.type': 'fixed-delay',
    'restart-strategy.fixed-delay.delay': RECOVERY.restartDelayMs,
    restartDelayMs: RECOVERY.restartDelayMs,
    keys: RECOVERY.keys,
    eventsPerSecond: RECOVERY.eventsPerSecond,
    failAfterRecords: RECOVERY.failAfterRecords,
  },
  steps: () => ['recovery'],
  runStep: () => recoveryStep(),
  metrics: (samples) => {
    const { recovery: s } = samples;
    return {
      recoveryMs: s.recoveryMs,
      failureToRestartDecisionMs: s.failureToRestartDecisionMs,
      failureToRestoreLoadedMs: s.failureToRestoreLoadedMs,
      failureToAttemptStartedMs: s.failureToAttemptStartedMs,
      restoredStateSizeBytes: s.restoredStateSizeBytes,
    };
  },
};

export const checkpointBenchmarks = {
  'checkpoint-overhead-aligned': overheadBenchmark('aligned'),
  'checkpoint-overhead-unaligned': overheadBenchmark('unaligned'),
  'checkpoint-backpressure-aligned': backpressureBenchmark('aligned'),
  'checkpoint-backpressure-unaligned': backpressureBenchmark('unaligned'),
  'recovery-small-state': recoveryBenchmark,
};

/** Checks a metric against a target such as '>= 0.95' or '<= 5'. */
export function meetsTarget(value, target) {
  const [op, bound] = target.split(' ');
  return op === '>=' ? value >= Number(bound) : value <= Number(bound);
}
