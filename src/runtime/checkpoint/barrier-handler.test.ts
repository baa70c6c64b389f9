import { describe, expect, it } from 'vitest';
import type { CheckpointBarrier } from '../channel/stream-element.js';
import type { BarrierHandlerContext } from './barrier-handler-context.js';
import { BarrierHandler, type BarrierMode } from './barrier-handler.js';

function barrier(id: number, o: { unaligned?: boolean; timeoutMs?: number; at?: number } = {}): CheckpointBarrier {
  return {
    kind: 'barrier',
    checkpointId: id,
    timestampMs: o.at ?? 0,
    options: { type: 'checkpoint', unaligned: o.unaligned ?? false, alignedCheckpointTimeoutMs: o.timeoutMs ?? 0 },
  };
}

function harness(mode: BarrierMode, numChannels: number, queued: Set<number> = new Set()) {
  const log: string[] = [];
  const blocked = new Set<number>();
  let now = 0;
  const timers: { at: number; fn: () => void; live: boolean }[] = [];
  const ctx: BarrierHandlerContext = {
    numChannels,
    blockChannel: (c) => {
      blocked.add(c);
      log.push(`block ${c}`);
    },
    unblockAllChannels: () => {
      blocked.clear();
      log.push('unblock');
    },
    snapshot: (b, unaligned) => log.push(`snapshot ${b.checkpointId}${unaligned ? ' unaligned' : ''}`),
    startCapture: (id, c) => log.push(`capture ${id}:${c}`),
    stopCapture: (id, c) => log.push(`stop ${id}:${c}`),
    prioritizeBarrier: (c, id) => {
      log.push(`prioritize ${id}:${c}`);
      return queued.has(c);
    },
    complete: (id) => log.push(`complete ${id}`),
    abort: (id, reason) => log.push(`abort ${id}: ${reason}`),
    schedule: (delayMs, fn) => {
      const t = { at: now + delayMs, fn, live: true };
      timers.push(t);
      return () => {
        t.live = false;
      };
    },
    nowMs: () => now,
  };
  const h = new BarrierHandler(mode, ctx);
  const advance = (ms: number): void => {
    now += ms;
    for (const t of timers) if (t.live && t.at <= now) {
      t.live = false;
      t.fn();
    }
  };
  return { h, log, blocked, advance };
}

describe('barrier handler', () => {
  it('aligned: blocks each channel until the last barrier, then snapshots and completes', () => {
    const { h, log, blocked } = harness('exactly-once', 3);
    h.onBarrier(1, barrier(1));
    h.onBarrier(0, barrier(1));
    expect([...blocked].sort()).toEqual([0, 1]);
    expect(log).not.toContain('snapshot 1');
    h.onBarrier(2, barrier(1));
    expect(log).toEqual(['block 1', 'block 0', 'block 2', 'unblock', 'snapshot 1', 'complete 1']);
    expect(h.pendingCheckpointId).toBeUndefined();
  });

  it('aligned with one input channel snapshots at once', () => {
    const { h, log } = harness('exactly-once', 1);
    h.onBarrier(0, barrier(4));
    expect(log).toEqual(['block 0', 'unblock', 'snapshot 4', 'complete 4']);
  });

  it('at-least-once: never blocks, snapshots at the last barrier', () => {
    const { h, log, blocked } = harness('at-least-once', 2);
    h.onBarrier(0, barrier(1));
    expect(blocked.size).toBe(0);
    h.onBarrier(1, barrier(1));
    expect(log).toEqual(['snapshot 1', 'complete 1']);
  });

  it('unaligned: snapshots at the first barrier and captures the other channels until theirs', () => {
    const { h, log } = harness('exactly-once', 3);
    h.onBarrier(2, barrier(7, { unaligned: true }));
    expect(log).toEqual(['snapshot 7 unaligned', 'capture 7:0', 'capture 7:1']);
    h.onBarrier(0, barrier(7, { unaligned: true }));
    h.onBarrier(1, barrier(7, { unaligned: true }));
    expect(log.slice(3)).toEqual(['stop 7:0', 'stop 7:1', 'complete 7']);
  });

  it('aligned with timeout switches to unaligned when the alignment takes too long', () => {
    const { h, log, blocked, advance } = harness('exactly-once', 3, new Set([1]));
    h.onBarrier(0, barrier(2, { unaligned: true, timeoutMs: 100 }));
    advance(50);
    expect(log).toEqual(['block 0']);
    advance(60);
    expect(blocked.size).toBe(0);
    expect(log).toEqual(['block 0', 'unblock', 'snapshot 2 unaligned', 'capture 2:1', 'capture 2:2', 'prioritize 2:1', 'prioritize 2:2']);
    h.onBarrier(1, barrier(2, { unaligned: true, timeoutMs: 100 }));
    h.onBarrier(2, barrier(2, { unaligned: true, timeoutMs: 100 }));
    expect(log.slice(-3)).toEqual(['stop 2:1', 'stop 2:2', 'complete 2']);
    expect(h.lastAlignment?.unaligned).toBe(true);
  });

  it('aligned with timeout stays aligned when the barriers arrive in time', () => {
    const { h, log, advance } = harness('exactly-once', 2);
    h.onBarrier(0, barrier(2, { unaligned: true, timeoutMs: 100 }));
    advance(10);
    h.onBarrier(1, barrier(2, { unaligned: true, timeoutMs: 100 }));
    advance(200);
    expect(log).toEqual(['block 0', 'block 1', 'unblock', 'snapshot 2', 'complete 2']);
    expect(h.lastAlignment).toEqual({ alignmentDurationMs: 10, unaligned: false });
  });

  it('a newer barrier aborts the pending checkpoint and unblocks at once', () => {
    const { h, log } = harness('exactly-once', 2);
    h.onBarrier(0, barrier(1));
    h.onBarrier(1, barrier(2));
    expect(log[1]).toMatch(/^unblock$/);
    expect(log[2]).toMatch(/^abort 1: /);
    expect(h.pendingCheckpointId).toBe(2);
    h.onBarrier(0, barrier(1)); // stale
    h.onBarrier(0, barrier(2));
    expect(log.slice(-2)).toEqual(['snapshot 2', 'complete 2']);
  });

  it('abort from the coordinator or a cancel marker ends the alignment', () => {
    const { h, log, blocked } = harness('exactly-once', 2);
    h.onBarrier(0, barrier(3));
    h.abort(3, 'expired');
    expect(blocked.size).toBe(0);
    expect(log).toEqual(['block 0', 'unblock', 'abort 3: expired']);
    h.onBarrier(1, barrier(3)); // late barrier of the aborted checkpoint is ignored
    expect(h.pendingCheckpointId).toBeUndefined();
    h.onCancelMarker(0, 4);
    h.onBarrier(1, barrier(4));
    expect(h.pendingCheckpointId).toBeUndefined();
  });

  it('a finished channel no longer holds the alignment back', () => {
    const { h, log } = harness('exactly-once', 2);
    h.onBarrier(0, barrier(1));
    h.onEndOfPartition(1);
    expect(log.slice(-2)).toEqual(['snapshot 1', 'complete 1']);
    h.onBarrier(0, barrier(2));
    expect(log.slice(-2)).toEqual(['snapshot 2', 'complete 2']);
  });

  it('a channel that delivers the same barrier twice is a bug', () => {
    const { h } = harness('exactly-once', 2);
    h.onBarrier(0, barrier(1));
    expect(() => h.onBarrier(0, barrier(1))).toThrow(/twice/);
  });
});
