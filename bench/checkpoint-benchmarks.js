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
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/**
 * CPU time of this process's main thread in ms (Linux: /proc/self/task/<pid>/stat, 10 ms
 * ticks), undefined elsewhere. Node 20 has no process.threadCpuUsage.
 */
function mainThreadCpuMs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime (fields 14 and 15), at 100 ticks/s
  } catch {
    return undefined;
  }
}

function invalid(message, logs) {
  const tail = logs?.length ? `\nlast runtime log lines:\n  ${logs.slice(-20).join('\n  ')}` : '';
  throw new BenchmarkInvalid(`INVALID BENCHMARK: ${message}${tail}`);
}

const completedCheckpoints = (executor) => executor.checkpointStats.entries().filter((e) => e.status === 'COMPLETED' && !e.isSavepoint);

// ---------------------------------------------------------------------------------------------
// 1. checkpoint-overhead-{aligned,unaligned}: Nexmark q5 (keyed sliding-window counts, as the
//    nexmark-q5 benchmark) on an unbounded source, parallelism 2 in one process. The rate of
//    source records in windows with checkpoints every second, divided by the rate in windows
//    without checkpoints, alternating in the same process (see alternatingStep).
// ---------------------------------------------------------------------------------------------

/**
 * The generator's event time runs at firstEventRate events per second of event time.
 * Nexmark's default (10M/s) is 15-20 times what one process generates here, so 10 s windows
 * would take minutes of wall time to fill: state would grow through the whole run and the
 * first windows fire late in it, measuring a job that never reaches a steady state (the
 * first firing alone stalled one window to 26k events/s). At 500k/s event time runs at 1-2x
 * wall time: windows fire every 1-2 s and the state is steady after the warm-up.
 */
const OVERHEAD = { parallelism: 2, intervalMs: 1000, firstEventRate: 500_000 };

/**
 * The same job in one process, checkpointing switched on and off in turns: windows of
 * `windowMs` without checkpoints (A) and with a checkpoint triggered every `intervalMs` (B),
 * in the order A B B A, repeated (linear drift, such as the state still growing, cancels).
 * Before an A window the last checkpoint must have completed (the gap is not measured).
 * Separate processes of the same configuration differ by up to 15% here (compilation,
 * memory layout), which hides the checkpoint overhead; within one process they do not.
 * Four cycles (16 windows, 80 s): with two, single runs spread from 0.85 to 1.08.
 */
const ALTERNATING = { warmupMs: 15000, windowMs: 5000, cycles: 4 };

async function alternatingStep(checkpointMode, incremental) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-chk-'));
  const config = {
    'parallelism.default': OVERHEAD.parallelism,
    'execution.checkpointing.incremental': incremental,
    // Checkpointing on, the periodic trigger out of the way: this step triggers them.
    'execution.checkpointing.interval': 24 * 3600 * 1000,
    'execution.checkpointing.unaligned.enabled': checkpointMode === 'unaligned',
    'execution.checkpointing.dir': dir,
    ...JSON.parse(process.env.SLUICE_BENCH_CONFIG ?? '{}'),
  };
  const env = StreamExecutionEnvironment.create(config);
  queries['nexmark-q5'].build(env, undefined, { firstEventRate: OVERHEAD.firstEventRate });
  const logs = [];
  const executor = new LocalExecutor(env.getJobGraph(), env.config, { log: (m) => { logs.push(m); if (process.env.BENCH_LOG) console.error(new Date().toISOString(), m); } });
  const running = executor.run();
  running.catch(() => {});
  const sample = () => {
    const cpu = process.cpuUsage();
    return { t: performance.now(), mainCpuMs: mainThreadCpuMs(), cpuMs: (cpu.user + cpu.system) / 1000, n: executor.progress().sourceRecords };
  };
  const durations = [];
  let failed = 0;
  const checkpoint = async () => {
    try {
      await executor.triggerCheckpoint();
    } catch {
      failed++;
    }
  };
  /** Every window in order, for a look at the spread (not a metric). */
  const sequence = [];
  const windows = { off: { events: 0, ms: 0, cpuMs: 0, processCpuMs: 0 }, on: { events: 0, ms: 0, cpuMs: 0, processCpuMs: 0 } };
  /** Checkpoints as the coordinator triggers them: every intervalMs until `end`, the next not before the previous completed (max-concurrent 1). */
  const checkpointUntil = async (start, end) => {
    let last = Promise.resolve();
    for (let next = start; next < end; next += OVERHEAD.intervalMs) {
      await Promise.race([last, sleep(Math.max(0, end - performance.now()))]);
      if (performance.now() >= end) break;
      await sleep(Math.max(0, next - performance.now()));
      const started = performance.now();
      last = checkpoint().then(() => durations.push(performance.now() - started));
    }
    await sleep(Math.max(0, end - performance.now()));
    return last;
  };
  const measure = async (kind) => {
    const a = sample();
    const last = kind === 'on' ? await checkpointUntil(a.t, a.t + ALTERNATING.windowMs) : await sleep(ALTERNATING.windowMs);
    const b = sample();
    const w = windows[kind];
    sequence.push({ kind, eventsPerSecond: Math.round(((b.n - a.n) * 1000) / (b.t - a.t)), mainThreadCores: +((b.mainCpuMs - a.mainCpuMs) / (b.t - a.t)).toFixed(2) });
    w.events += b.n - a.n;
    w.ms += b.t - a.t;
    w.cpuMs += b.mainCpuMs - a.mainCpuMs;
    w.processCpuMs += b.cpuMs - a.cpuMs;
    await last; // not measured: the last checkpoint finishes before an off window starts
  };
  await sleep(ALTERNATING.warmupMs);
  await checkpoint(); // the first snapshot of a backend is its full one (also with the snapshot thread)
  for (let c = 0; c < ALTERNATING.cycles; c++) for (const kind of ['off', 'on', 'on', 'off']) await measure(kind);
  executor.cancel();
  let result;
  try {
    result = await running;
  } catch (e) {
    invalid(`the job failed: ${e.message}${e.cause ? ` (cause: ${e.cause.message})` : ''}`, logs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (result.numRestarts > 0) invalid(`the run restarted ${result.numRestarts} time(s): throughput not comparable`, logs);
  if (durations.length === 0) invalid('no checkpoint completed in the windows with checkpoints', logs);
  const done = completedCheckpoints(executor);
  const rate = (w) => (w.events * 1000) / w.ms;
  const perCpu = (w) => (w.events * 1000) / w.cpuMs;
  return {
    mode: checkpointMode,
    incremental,
    eventsPerSecondOff: rate(windows.off),
    eventsPerSecondOn: rate(windows.on),
    throughputRatio: rate(windows.on) / rate(windows.off),
    throughputRatioPerMainThreadCpuSecond: perCpu(windows.on) / perCpu(windows.off),
    mainThreadCoresUsedOff: windows.off.cpuMs / windows.off.ms,
    mainThreadCoresUsedOn: windows.on.cpuMs / windows.on.ms,
    cpuCoresUsedOff: windows.off.processCpuMs / windows.off.ms,
    cpuCoresUsedOn: windows.on.processCpuMs / windows.on.ms,
    checkpointsInWindows: durations.length,
    windows: sequence,
    failedCheckpoints: failed,
    checkpointDurationsMs: done.map((e) => e.endToEndDurationMs).reverse(),
    checkpointTypes: [...new Set(done.map((e) => e.checkpointType))],
    stateSizeBytes: done[0]?.stateSizeBytes ?? 0,
  };
}

function overheadBenchmark(mode) {
  return {
    description:
      `Nexmark q5 (unbounded nexmarkSource with firstEventRate ${OVERHEAD.firstEventRate}, keyBy auction, sliding 10s/2s windows, max per window), parallelism ${OVERHEAD.parallelism} in one process; ` +
      `after ${ALTERNATING.warmupMs / 1000} s, source records/s in ${ALTERNATING.windowMs / 1000} s windows with ${mode} checkpoints every ${OVERHEAD.intervalMs} ms ` +
      `and without, alternating (A B B A x ${ALTERNATING.cycles}) in one process; full checkpoints (headline) and incremental ones, each in its own process`,
    parallelism: OVERHEAD.parallelism,
    headline: ['throughputRatio'],
    target: { throughputRatio: '>= 0.95' },
    config: {
      'execution.checkpointing.interval': OVERHEAD.intervalMs,
      checkpointStorage: 'filesystem, a temporary directory under os.tmpdir() (execution.checkpointing.dir)',
      'execution.checkpointing.unaligned.enabled': mode === 'unaligned',
      nexmarkFirstEventRate: OVERHEAD.firstEventRate,
      ...ALTERNATING,
    },
    // The headline takes full checkpoints (Flink's default); incremental ones
    // (execution.checkpointing.incremental) are reported beside it.
    steps: (run) => (run % 2 === 0 ? [mode, `${mode}-incremental`] : [`${mode}-incremental`, mode]),
    runStep: (step) => alternatingStep(mode, step.endsWith('-incremental')),
    metrics: (samples) => {
      const cp = samples[mode];
      const inc = samples[`${mode}-incremental`];
      return {
        throughputRatio: cp.throughputRatio,
        throughputRatioIncremental: inc.throughputRatio,
        // Events per CPU second of the thread that runs the subtasks, with checkpoints / without.
        throughputRatioPerMainThreadCpuSecond: cp.throughputRatioPerMainThreadCpuSecond,
        throughputRatioPerMainThreadCpuSecondIncremental: inc.throughputRatioPerMainThreadCpuSecond,
        eventsPerSecondWithCheckpoints: Math.round(cp.eventsPerSecondOn),
        eventsPerSecondWithoutCheckpoints: Math.round(cp.eventsPerSecondOff),
        eventsPerSecondWithIncrementalCheckpoints: Math.round(inc.eventsPerSecondOn),
        mainThreadCoresUsedWithCheckpoints: cp.mainThreadCoresUsedOn,
        mainThreadCoresUsedWithoutCheckpoints: cp.mainThreadCoresUsedOff,
        cpuCoresUsedWithCheckpoints: cp.cpuCoresUsedOn,
        cpuCoresUsedWithoutCheckpoints: cp.cpuCoresUsedOff,
        completedCheckpoints: cp.checkpointsInWindows,
        checkpointDurationMsP50: percentile(cp.checkpointDurationsMs, 50),
        checkpointDurationMsP50Incremental: percentile(inc.checkpointDurationsMs, 50),
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
