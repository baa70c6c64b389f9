import { describe, expect, it } from 'vitest';
import { ChangedEntries } from './changed-entries.js';
import { IncrementalSnapshots } from './incremental-snapshots.js';
import { SharedStateRegistry } from '../checkpoint/shared-state-registry.js';

describe('IncrementalSnapshots (full or delta)', () => {
  it('full first; then deltas over the last completed checkpoint, never over an aborted one', () => {
    const p = new IncrementalSnapshots({ maxDeltas: 10, maxDeltaBytesRatio: 10, maxUnconfirmed: 5 });
    expect(p.plan(1)).toEqual({ kind: 'full' });
    p.written(1, 100);
    expect(p.plan(2)).toEqual({ kind: 'full' }); // 1 not complete yet
    p.written(2, 100);
    expect(p.confirm(1)).toBe(true);
    expect(p.plan(3)).toEqual({ kind: 'delta', baseCheckpointId: 1 });
    p.written(3, 10);
    p.aborted(3);
    expect(p.plan(4)).toEqual({ kind: 'delta', baseCheckpointId: 1 });
    p.written(4, 10);
    expect(p.confirm(4)).toBe(true);
    expect(p.plan(5)).toEqual({ kind: 'delta', baseCheckpointId: 4 });
    expect(p.confirm(99)).toBe(false); // a savepoint: not ours
  });

  it('a checkpoint requested full starts a new chain once it completes; aborted, the old chain goes on', () => {
    const p = new IncrementalSnapshots({ maxDeltas: 10, maxDeltaBytesRatio: 10, maxUnconfirmed: 5 });
    p.plan(1);
    p.written(1, 100);
    p.confirm(1);
    expect(p.plan(2, undefined, true)).toEqual({ kind: 'full' });
    p.written(2, 100);
    p.aborted(2);
    expect(p.plan(3)).toEqual({ kind: 'delta', baseCheckpointId: 1 });
    p.written(3, 10);
    p.confirm(3);
    expect(p.plan(4, undefined, true)).toEqual({ kind: 'full' });
    p.written(4, 100);
    expect(p.confirm(4)).toBe(true);
    expect(p.plan(5)).toEqual({ kind: 'delta', baseCheckpointId: 4 });
  });

  it('a full snapshot when the chain is long or large, or when checkpoints stop completing', () => {
    const p = new IncrementalSnapshots({ maxDeltas: 2, maxDeltaBytesRatio: 1, maxUnconfirmed: 3 });
    const step = (id: number, bytes: number): string => {
      const plan = p.plan(id);
      p.written(id, bytes);
      p.confirm(id);
      return plan.kind;
    };
    expect([step(1, 100), step(2, 10), step(3, 10), step(4, 10), step(5, 10)]).toEqual(['full', 'delta', 'delta', 'full', 'delta']);
    expect([step(6, 95), step(7, 10)]).toEqual(['delta', 'full']); // 105 bytes of deltas > 100 of the full one
    for (let id = 8; id <= 10; id++) p.plan(id); // none completes
    expect(p.plan(11)).toEqual({ kind: 'full' });
  });

  it('with a count of live entries, the size limit grows with the state: a growing state keeps its deltas', () => {
    const p = new IncrementalSnapshots({ maxDeltas: 100, maxDeltaBytesRatio: 1, maxUnconfirmed: 3 });
    let entries = 100; // 1 byte per entry; each checkpoint adds 50 entries and rewrites 10
    const kinds: string[] = [];
    for (let id = 1; id <= 12; id++) {
      const plan = p.plan(id, () => entries);
      kinds.push(plan.kind);
      p.written(id, plan.kind === 'full' ? entries : 60);
      p.confirm(id);
      entries += 50;
    }
    // Deltas reach the full size (100) at checkpoint 3, but the state has grown to 250 entries by
    // then; a full one comes only when the deltas (60 each) outgrow the grown state.
    expect(kinds.indexOf('full', 1)).toBe(-1);
    const shrinking = new IncrementalSnapshots({ maxDeltas: 100, maxDeltaBytesRatio: 1, maxUnconfirmed: 3 });
    const seen: string[] = [];
    for (let id = 1; id <= 4; id++) {
      const plan = shrinking.plan(id, () => 100);
      seen.push(plan.kind);
      shrinking.written(id, plan.kind === 'full' ? 100 : 60); // updates only: the deltas overwrite
      shrinking.confirm(id);
    }
    expect(seen).toEqual(['full', 'delta', 'delta', 'full']);
  });
});

describe('ChangedEntries', () => {
  it('the changes since a base are the union of the generations after it', () => {
    const c = new ChangedEntries<string>(2);
    c.mark(0, 'a');
    c.seal(1);
    c.mark(0, 'b');
    c.mark(1, 'x');
    c.seal(2);
    c.mark(0, 'c');
    c.seal(3);
    expect([...c.since(1, 3)(0)].sort()).toEqual(['b', 'c']);
    expect([...c.since(1, 2)(1)]).toEqual(['x']);
    c.drop(2);
    expect([...c.since(0, 3)(0)]).toEqual(['c']);
  });
});

describe('SharedStateRegistry', () => {
  it('a file is free when its last reference goes; unbalanced unregistering is a bug', () => {
    const r = new SharedStateRegistry();
    r.register(['f1', 'f2']);
    r.register(['f1', 'f3']);
    expect(r.unregister(['f1', 'f2'])).toEqual(['f2']);
    expect(r.references('f1')).toBe(1);
    expect(r.unregister(['f1', 'f3'])).toEqual(['f1', 'f3']);
    expect(() => r.unregister(['f1'])).toThrow(/more often than it was registered/);
  });
});
