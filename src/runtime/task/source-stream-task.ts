import type { InputStatus, Source, SourceReader } from '../../api/source.js';
import type { WatermarkAlignment } from '../../api/watermark-strategy.js';
import { MetricGroup } from '../../metrics/metric-group.js';
import { MAX_WATERMARK, MIN_WATERMARK, type CheckpointBarrier } from '../channel/stream-element.js';
import type { SplitAnswer } from '../split-enumerator.js';
import type { WatermarkReport } from '../watermark-alignment.js';
import { PlainSourceOutput, SourceWatermarks, type SourceTaskOutput } from './source-watermarks.js';
import { SOURCE_SLICE_RECORDS, StreamTask, type InputResult, type TaskDeployment } from './stream-task.js';
import { isThenable } from '../operators/synchronous-function.js';
import { blameOperatorNamed } from './stream-operator.js';
import { isTerminal } from './task-state.js';

/** How a source subtask reaches the JobManager's coordinators. */
export interface SourceTaskLinks {
  /** Split requests to the split enumerator (on-request sources). */
  readonly requestSplit?: () => void;
  /** Watermark reports to the watermark alignment (strategies with withWatermarkAlignment). */
  readonly reportWatermark?: (report: WatermarkReport) => void;
}

/** A subtask whose chain starts with a source: polls the source reader between mails. */
export class SourceStreamTask extends StreamTask {
  protected readonly sliceBudgetRecords = SOURCE_SLICE_RECORDS;
  readonly reader: SourceReader<unknown, unknown>;
  private readonly output: SourceTaskOutput;
  /** fromSource with a watermark strategy: the periodic watermarks of its splits. */
  private readonly watermarks: { readonly output: SourceWatermarks; readonly intervalMs: number } | undefined;
  private awaitingAvailability = false;
  private ended = false;
  /** A checkpoint taken after every source finished its data completed: the task may end. */
  private finalCheckpointDone = false;
  private stopMode: 'drain' | 'suspend' | undefined;
  /** Metrics the reader registers (e.g. Kafka lag per partition), under the source operator's scope. */
  readonly readerMetrics = new MetricGroup();

  /** Splits come from the JobManager's enumerator, one per request (splitAssignment 'on-request'). */
  private readonly onRequest: boolean;

  /** Watermark alignment: the watermark this subtask may reach (the JobManager's answer to its last report). */
  private maxAllowedWatermarkMs = MAX_WATERMARK;
  /** Splits paused by alignment (readers with pauseOrResumeSplits). */
  private pausedSplits = new Set<string>();
  private readonly alignment: { readonly spec: WatermarkAlignment; readonly report: (r: WatermarkReport) => void; readonly allowUnalignedSplits: boolean } | undefined;

  /**
   * `links.requestSplit`: sends this subtask's split request to the enumerator (on-request
   * sources); the answer (a split, or no more splits) comes back through `assignSplit`.
   * `links.reportWatermark`: sends its watermark report (watermark alignment); the answer comes
   * back through `announceMaxWatermark`.
   */
  constructor(
    d: TaskDeployment,
    source: Source<unknown, unknown>,
    private readonly splits: readonly unknown[],
    links: SourceTaskLinks = {},
  ) {
    super(d);
    const head = this.chain.sourceOutput;
    if (head === undefined) throw new Error(`${this.name}: a source task needs a source at the head of its chain`);
    const spec = d.vertex.nodes[0]!.sourceWatermarks;
    if (spec === undefined) {
      this.output = new PlainSourceOutput(head, this.name);
    } else {
      const output = new SourceWatermarks(head, spec.strategy, () => d.clock.nowMs(), this.name);
      this.output = output;
      this.watermarks = { output, intervalMs: spec.autoWatermarkIntervalMs() };
    }
    this.onRequest = source.splitAssignment === 'on-request';
    const requestSplit = links.requestSplit;
    const aligned = spec?.strategy.alignment;
    if (aligned !== undefined) {
      const report = links.reportWatermark;
      if (report === undefined) throw new Error(`${this.name}: watermark alignment needs a JobManager to report to, and this task has none`);
      this.alignment = { spec: aligned, report, allowUnalignedSplits: spec!.allowUnalignedSourceSplits() };
      // Flink's source metric: how far this subtask's watermark is ahead of its group's least.
      const output = this.watermarks!.output;
      this.readerMetrics.gauge('watermarkAlignmentDrift', () => {
        const groupLeast = this.maxAllowedWatermarkMs - aligned.maxAllowedDriftMs;
        const current = output.currentWatermarkMs;
        // Undefined (0) until this subtask and the group's least have watermarks, and once the group is unbounded (all idle or done).
        const known = this.maxAllowedWatermarkMs !== MAX_WATERMARK && groupLeast > MIN_WATERMARK && current !== MIN_WATERMARK && current !== MAX_WATERMARK;
        return known ? current - groupLeast : 0;
      });
    }
    const name = this.name;
    this.reader = source.createReader({
      subtaskIndex: d.subtaskIndex,
      parallelism: d.vertex.parallelism,
      attemptNumber: d.attemptNumber,
      nowMs: () => d.clock.nowMs(),
      metricGroup: this.readerMetrics,
      sendSplitRequest: () => {
        if (!this.onRequest || requestSplit === undefined) throw new Error(`${name}: sendSplitRequest() is for sources with splitAssignment 'on-request'; this source assigns its splits statically`);
        if (!isTerminal(this.state)) requestSplit();
      },
    });
  }

  protected override async initializeInput(): Promise<void> {
    const w = this.watermarks;
    if (w !== undefined && w.intervalMs > 0) {
      this.processingTime.scheduleAtFixedRate(w.intervalMs, () => {
        w.output.onPeriodicEmit();
        this.alignSplits();
      });
    }
    const aligned = this.alignment;
    if (aligned !== undefined) {
      this.reportWatermark();
      this.processingTime.scheduleAtFixedRate(aligned.spec.updateIntervalMs, () => this.reportWatermark());
    }
    await this.reader.start?.();
    if (this.onRequest) {
      // Only the splits it held at the checkpoint; the rest it asks the enumerator for.
      const restored = this.d.restore?.sourceSplits ?? [];
      if (restored.length > 0) this.reader.addSplits(restored);
      return;
    }
    this.reader.addSplits(this.d.restore?.sourceSplits ?? this.splits);
    this.reader.noMoreSplits();
  }

  /**
   * The enumerator's answer to a split request, in the mailbox: after a checkpoint's trigger
   * that was sent before it, before one sent after it (see split-enumerator.ts).
   */
  assignSplit(answer: SplitAnswer): void {
    this.enqueueMail(() => {
      if (isTerminal(this.state)) return;
      if (answer.kind === 'split') this.reader.addSplits([answer.split]);
      else this.reader.noMoreSplits();
      this.wake();
    });
  }

  /** The source's name, for errors of its reader. */
  private get sourceName(): string {
    return this.d.vertex.nodes[0]!.name;
  }

  /** Watermark alignment: the JobManager's answer to a report, in the mailbox. */
  announceMaxWatermark(maxWatermarkMs: number): void {
    this.enqueueMail(() => {
      this.maxAllowedWatermarkMs = maxWatermarkMs;
      this.alignSplits();
      this.wake();
    });
  }

  /**
   * Split-level alignment (Flink 1.17's): the splits whose own watermark is beyond the allowed
   * one are paused in a reader that can (`pauseOrResumeSplits`), the others resumed; the
   * subtask itself reads on while the least of its splits is within the limit.
   */
  private alignSplits(): void {
    const reader = this.reader;
    const aligned = this.alignment;
    if (aligned === undefined) return;
    const output = this.watermarks!.output;
    if (reader.pauseOrResumeSplits === undefined) {
      // As Flink's SourceOperator: a split running ahead in a reader of several that cannot
      // pause it is an error, unless the job allows aligning such subtasks as a whole.
      if (aligned.allowUnalignedSplits || output.numSplits <= 1 || output.splitsAhead(this.maxAllowedWatermarkMs).length === 0) return;
      throw new Error(
        `${this.name}: watermark alignment (group '${aligned.spec.group}'): a split of this reader is ahead of what the group allows, and the reader ` +
          `cannot pause single splits (it reads ${output.numSplits} splits, each with its own watermarks, and has no pauseOrResumeSplits). ` +
          'Implement pauseOrResumeSplits in the source reader, or set pipeline.watermark-alignment.allow-unaligned-source-splits: true ' +
          'to align this subtask only as a whole (its splits may then drift apart further than the group allows)',
      );
    }
    const ahead = new Set(output.splitsAhead(this.maxAllowedWatermarkMs));
    const pause = [...ahead].filter((id) => !this.pausedSplits.has(id));
    const resume = [...this.pausedSplits].filter((id) => !ahead.has(id));
    if (pause.length === 0 && resume.length === 0) return;
    this.pausedSplits = ahead;
    reader.pauseOrResumeSplits(pause, resume);
  }

  /** Reports this subtask's watermark to its alignment group: MAX_WATERMARK once idle or done, so it holds nobody back. */
  private reportWatermark(): void {
    const aligned = this.alignment;
    const output = this.watermarks?.output;
    if (aligned === undefined || output === undefined) return;
    const { group, maxAllowedDriftMs } = aligned.spec;
    aligned.report({ group, maxAllowedDriftMs, watermarkMs: this.ended || output.isIdle ? MAX_WATERMARK : output.currentWatermarkMs });
  }

  /**
   * Called by the coordinator: in the mailbox, between two polls, the reader's positions are
   * taken, the operators snapshotted and the barrier emitted ahead of later records.
   */
  triggerCheckpoint(barrier: CheckpointBarrier): void {
    this.enqueueMail(() => {
      if (this.state !== 'running') {
        this.d.checkpointing?.responder.decline(this.d.vertex.id, this.d.subtaskIndex, barrier.checkpointId, 'CHECKPOINT_DECLINED_TASK_CLOSING', `${this.name} is not running`);
        return;
      }
      if (this.dataPhase === 'finished') {
        // After the end of data the barrier goes behind everything in the channels (aligned):
        // downstream subtasks then finish their data before they snapshot, so nothing they
        // emit falls after the final checkpoint.
        barrier = { ...barrier, options: { ...barrier.options, unaligned: false, alignedCheckpointTimeoutMs: 0 } };
      }
      let splits: unknown[];
      try {
        splits = this.reader.snapshotState(barrier.checkpointId);
      } catch (e) {
        throw blameOperatorNamed(e, this.sourceName);
      }
      this.performCheckpoint(barrier, barrier.options.unaligned && barrier.options.alignedCheckpointTimeoutMs <= 0, splits);
    });
  }

  protected override async onCheckpointComplete(checkpointId: number, final: boolean): Promise<void> {
    await this.reader.notifyCheckpointComplete?.(checkpointId);
    if (final && (this.dataPhase === 'finished' || this.stopMode === 'suspend')) {
      this.finalCheckpointDone = true;
      this.wake();
    }
  }

  protected override onDataFinished(): void {
    if (this.d.checkpointing?.finalCheckpoint === true || this.stopMode === 'drain') this.d.checkpointing?.responder.dataFinished(this.d.vertex.id, this.d.subtaskIndex);
  }

  get isRunning(): boolean {
    return this.state === 'running' && !isTerminal(this.state) && !this.ended;
  }

  /**
   * Stop-with-savepoint: no record after this. With `drain` the source ends its data (final
   * watermark, operators finish) before the savepoint; without, it only pauses and the job
   * ends after the savepoint without finishing its operators.
   */
  stop(drain: boolean): void {
    this.enqueueMail(() => {
      if (this.stopMode !== undefined || this.ended) return;
      this.stopMode = drain ? 'drain' : 'suspend';
      if (!drain) this.d.checkpointing?.responder.dataFinished(this.d.vertex.id, this.d.subtaskIndex);
    });
  }

  protected processInput(budgetRecords: number): InputResult {
    if (this.stopMode === 'suspend') {
      if (!this.finalCheckpointDone) return 'wait';
      this.suspended = true;
      return 'end';
    }
    if (this.stopMode === 'drain' && !this.ended) {
      this.ended = true;
      this.output.endOfInput();
      this.reportWatermark();
      return 'end-of-data';
    }
    if (this.ended) {
      const waitForFinal = this.d.checkpointing?.finalCheckpoint === true || this.stopMode !== undefined;
      return !waitForFinal || this.finalCheckpointDone ? 'end' : 'wait';
    }
    // Watermark alignment: ahead of what the group allows, the reader waits (mails still run:
    // checkpoints, and the next answer, which wakes the task).
    const aligned = this.alignment === undefined ? undefined : this.watermarks!.output;
    if (aligned !== undefined && aligned.currentWatermarkMs > this.maxAllowedWatermarkMs) return 'wait';
    const reader = this.reader;
    const output = this.output;
    const start = output.count;
    for (let polls = 0; polls < budgetRecords; polls++) {
      let status: InputStatus;
      try {
        status = reader.pollNext(output);
      } catch (e) {
        // The reader's own error names the source (the operators chained to it blame themselves).
        throw blameOperatorNamed(e, this.sourceName);
      }
      if (status === 'end') {
        this.ended = true;
        this.recordsIn += output.count - start;
        this.output.endOfInput();
        this.reportWatermark();
        return 'end-of-data';
      }
      if (status === 'nothing') {
        this.recordsIn += output.count - start;
        if (!this.awaitingAvailability) {
          this.awaitingAvailability = true;
          reader.isAvailable().then(
            () => {
              this.awaitingAvailability = false;
              this.wake();
            },
            (e: unknown) => this.fail(blameOperatorNamed(e, this.sourceName)),
          );
        }
        return 'wait';
      }
      if (status !== 'more') {
        throw blameOperatorNamed(
          new Error(`the source reader's pollNext returned ${describeStatus(status)}; it must return 'more' (call again now), 'nothing' (after isAvailable()) or 'end'`),
          this.sourceName,
        );
      }
      if (this.availability.blocked || this.inputStopped) break;
      // A generator that emits per event may have moved the watermark past the allowed one.
      if (aligned !== undefined && aligned.currentWatermarkMs > this.maxAllowedWatermarkMs) break;
    }
    this.recordsIn += output.count - start;
    return this.availability.blocked || this.inputStopped ? 'wait' : 'more';
  }

  protected override async closeInput(): Promise<void> {
    await this.reader.close?.();
  }
}

/** A value pollNext should not have returned, for the error. */
function describeStatus(status: unknown): string {
  if (typeof status === 'string') return `'${status}'`;
  if (isThenable(status)) return 'a promise (pollNext must not be async: return \'nothing\' and resolve isAvailable() when there is more)';
  return String(status);
}
