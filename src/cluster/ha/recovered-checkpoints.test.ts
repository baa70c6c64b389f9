import { describe, expect, it } from 'vitest';
import { recoveredCheckpoints } from './recovered-checkpoints.js';

const chk = (id: number) => ({ checkpointId: id, pointer: `/c/job/chk-${id}` });

describe('recoveredCheckpoints', () => {
  it("restores ZooKeeper's latest, keeps older ones, drops newer unrecorded ones, and ids go on past everything", () => {
    const r = recoveredCheckpoints({ latest: chk(7), counter: 9, onDisk: [chk(8), chk(7), chk(6)], highestDirectoryId: 10 });
    expect(r.retained.map((c) => c.checkpointId)).toEqual([6, 7]);
    expect(r.unrecorded.map((c) => c.checkpointId)).toEqual([8]);
    expect(r.nextCheckpointId).toBe(11);
  });

  it('keeps the recorded checkpoint even when the listing missed it, and never goes below the counter', () => {
    const r = recoveredCheckpoints({ latest: chk(4), counter: 12, onDisk: [], highestDirectoryId: 0 });
    expect(r.retained).toEqual([chk(4)]);
    expect(r.nextCheckpointId).toBe(12);
  });

  it('a job without a recorded checkpoint starts afresh; directories it left are unrecorded', () => {
    const r = recoveredCheckpoints({ latest: undefined, counter: 1, onDisk: [chk(2)], highestDirectoryId: 3 });
    expect(r.retained).toEqual([]);
    expect(r.unrecorded).toEqual([chk(2)]);
    expect(r.nextCheckpointId).toBe(4);
  });
});
