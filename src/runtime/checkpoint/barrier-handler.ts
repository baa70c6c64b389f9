import type { CheckpointBarrier } from '../channel/stream-element.js';
import type { BarrierHandlerContext } from './barrier-handler-context.js';

/** Checkpointing guarantee of a task's inputs. */
export type BarrierMode = 'exactly-once' | 'at-least-once';

/**
 * The states of a task's barrier alignment, each a small record; events return the next
 * state. Operators never see barriers.
 *
 * - waiting: no checkpoint in progress.
 * - aligning (exactly-once): channels whose barrier arrived are blocked; snapshot when all
 *   arrived. With an aligned-checkpoint timeout the alignment may switch to unaligned.
 * - unaligned: the snapshot is taken at the first barrier; records consumed from channels
 *   whose barrier has not arrived are captured as in-flight data.
 * - counting (at-least-once): nothing is blocked; snapshot at the last barrier.
 */
export type BarrierState =
  | { readonly kind: 'waiting' }
  | { readonly kind: 'aligning'; readonly barrier: CheckpointBarrier; readonly arrived: Set<number>; readonly startedMs: number; cancelTimeout: (() => void) | undefined }
  | { readonly kind: 'unaligned'; readonly barrier: CheckpointBarrier; readonly arrived: Set<number> }
  | { readonly kind: 'counting'; readonly barrier: CheckpointBarrier; readonly arrived: Set<number> };

export interface AlignmentStats {
  /** Time from the first to the last barrier (or to the switch to unaligned). */
  readonly alignmentDurationMs: number;
  readonly unaligned: boolean;
}

/** One per task: handles barriers, cancel markers and finished channels of all its inputs. */
export class BarrierHandler {
  state: BarrierState = { kind: 'waiting' };
  /** Highest checkpoint id seen; barriers of older ones are stale. */
  private latestId = 0;
  private readonly finished = new Set<number>();
  lastAlignment: AlignmentStats | undefined;

  constructor(
    private readonly mode: BarrierMode,
    private readonly ctx: BarrierHandlerContext,
  ) {}

  get pendingCheckpointId(): number | undefined {
    return this.state.kind === 'waiting' ? undefined : this.state.barrier.checkpointId;
  }

  private liveChannels(): number {
    return this.ctx.numChannels - this.finished.size;
  }

  onBarrier(channel: number, barrier: CheckpointBarrier): void {
    const id = barrier.checkpointId;
    if (id < this.latestId) return; // stale: that checkpoint was abandoned here
    const s = this.state;
    if (s.kind !== 'waiting' && id > s.barrier.checkpointId) {
      this.abortPending(`checkpoint ${id} started before ${s.barrier.checkpointId} completed at this task (subsumed)`);
    }
    if (this.state.kind === 'waiting') {
      if (id === this.latestId) return; // already completed or aborted here
      this.latestId = id;
      this.begin(channel, barrier);
    } else {
      this.arrive(channel);
    }
  }

  private begin(channel: number, barrier: CheckpointBarrier): void {
    const arrived = new Set<number>([channel]);
    if (this.mode === 'at-least-once') {
      this.state = { kind: 'counting', barrier, arrived };
    } else if (barrier.options.unaligned && barrier.options.alignedCheckpointTimeoutMs <= 0) {
      this.startUnaligned(barrier, arrived, this.ctx.nowMs());
    } else {
      const state: BarrierState = { kind: 'aligning', barrier, arrived, startedMs: this.ctx.nowMs(), cancelTimeout: undefined };
      this.state = state;
      this.ctx.blockChannel(channel);
      const timeoutMs = barrier.options.alignedCheckpointTimeoutMs;
      if (barrier.options.unaligned && timeoutMs > 0) {
        const remainingMs = barrier.timestampMs + timeoutMs - this.ctx.nowMs();
        if (remainingMs <= 0) {
          this.switchToUnaligned();
          return;
        }
        state.cancelTimeout = this.ctx.schedule(remainingMs, () => {
          if (this.state === state) this.switchToUnaligned();
        });
      }
    }
    this.maybeComplete();
  }

  private startUnaligned(barrier: CheckpointBarrier, arrived: Set<number>, startedMs: number): void {
    this.state = { kind: 'unaligned', barrier, arrived };
    this.lastAlignment = { alignmentDurationMs: this.ctx.nowMs() - startedMs, unaligned: true };
    this.ctx.snapshot(barrier, true);
    for (let c = 0; c < this.ctx.numChannels; c++) {
      if (!arrived.has(c) && !this.finished.has(c)) this.ctx.startCapture(barrier.checkpointId, c);
    }
  }

  /** Aligned checkpoint took too long: snapshot now and let blocked channels flow again. */
  private switchToUnaligned(): void {
    const s = this.state;
    if (s.kind !== 'aligning') return;
    s.cancelTimeout?.();
    this.ctx.unblockAllChannels();
    this.startUnaligned(s.barrier, s.arrived, s.startedMs);
    for (let c = 0; c < this.ctx.numChannels; c++) {
      if (!s.arrived.has(c) && !this.finished.has(c)) this.ctx.prioritizeBarrier(c, s.barrier.checkpointId);
    }
    this.maybeComplete();
  }

  private arrive(channel: number): void {
    const s = this.state;
    if (s.kind === 'waiting') return;
    if (s.arrived.has(channel)) {
      throw new Error(`channel ${channel} delivered the barrier of checkpoint ${s.barrier.checkpointId} twice`);
    }
    s.arrived.add(channel);
    if (s.kind === 'aligning') this.ctx.blockChannel(channel);
    if (s.kind === 'unaligned') this.ctx.stopCapture(s.barrier.checkpointId, channel);
    this.maybeComplete();
  }

  private maybeComplete(): void {
    const s = this.state;
    if (s.kind === 'waiting') return;
    let count = 0;
    for (const c of s.arrived) if (!this.finished.has(c)) count++;
    if (count < this.liveChannels()) return;
    const id = s.barrier.checkpointId;
    switch (s.kind) {
      case 'aligning':
        s.cancelTimeout?.();
        this.lastAlignment = { alignmentDurationMs: this.ctx.nowMs() - s.startedMs, unaligned: false };
        this.ctx.unblockAllChannels();
        this.ctx.snapshot(s.barrier, false);
        break;
      case 'counting':
        this.lastAlignment = { alignmentDurationMs: 0, unaligned: false };
        this.ctx.snapshot(s.barrier, false);
        break;
      case 'unaligned':
        break;
    }
    this.state = { kind: 'waiting' };
    this.ctx.complete(id);
  }

  /** A cancel marker from upstream: that checkpoint was aborted there. */
  onCancelMarker(_channel: number, checkpointId: number): void {
    if (checkpointId > this.latestId) this.latestId = checkpointId;
    if (this.pendingCheckpointId === checkpointId) this.abortPending(`checkpoint ${checkpointId} was canceled upstream`);
  }

  /** The coordinator aborted the checkpoint. */
  abort(checkpointId: number, reason: string): void {
    if (checkpointId > this.latestId) this.latestId = checkpointId;
    if (this.pendingCheckpointId === checkpointId) this.abortPending(reason);
  }

  onEndOfPartition(channel: number): void {
    this.finished.add(channel);
    this.maybeComplete();
  }

  private abortPending(reason: string): void {
    const s = this.state;
    if (s.kind === 'waiting') return;
    if (s.kind === 'aligning') {
      s.cancelTimeout?.();
      this.ctx.unblockAllChannels();
    }
    if (s.kind === 'unaligned') {
      for (let c = 0; c < this.ctx.numChannels; c++) if (!s.arrived.has(c)) this.ctx.stopCapture(s.barrier.checkpointId, c);
    }
    this.state = { kind: 'waiting' };
    this.ctx.abort(s.barrier.checkpointId, reason);
  }
}
