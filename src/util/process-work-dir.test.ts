import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeProcessWorkDir, ownerIsGone, probeProcess, removeDeadProcessWorkDirs, workDirOwner } from './process-work-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const parent = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-workdir-test-'));
  dirs.push(d);
  return d;
};
/** A pid that was just in use and is no more (a child that exited). */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('work directories named after their process', () => {
  it('reads the owner from the name, and only from names of its own prefix and form', () => {
    expect(workDirOwner('sluice-tm-123-4567-aB3xYz', 'sluice-tm-')).toEqual({ pid: 123, startTicks: 4567 });
    expect(workDirOwner('sluice-tm-123-x-aB3xYz', 'sluice-tm-')).toEqual({ pid: 123, startTicks: undefined });
    // Older names (mkdtemp without the owner), test directories, other prefixes: not ours to judge.
    expect(workDirOwner('sluice-tm-aB3xYz', 'sluice-tm-')).toBeUndefined();
    expect(workDirOwner('sluice-jm-restart-aB3xYz', 'sluice-jm-')).toBeUndefined();
    expect(workDirOwner('sluice-jm-123-4567-aB3xYz', 'sluice-tm-')).toBeUndefined();
    expect(workDirOwner('sluice-tm-123-4567-aB3xYz.tmp', 'sluice-tm-')).toBeUndefined();
  });

  it('an owner is gone when its pid is not alive, or alive with another start time (a reused pid)', () => {
    expect(ownerIsGone({ pid: 7, startTicks: 100 }, { alive: false, startTicks: undefined })).toBe(true);
    expect(ownerIsGone({ pid: 7, startTicks: 100 }, { alive: true, startTicks: 250 })).toBe(true);
    expect(ownerIsGone({ pid: 7, startTicks: 100 }, { alive: true, startTicks: 100 })).toBe(false);
    // Unknown start time on either side: alive is alive.
    expect(ownerIsGone({ pid: 7, startTicks: undefined }, { alive: true, startTicks: 250 })).toBe(false);
    expect(ownerIsGone({ pid: 7, startTicks: 100 }, { alive: true, startTicks: undefined })).toBe(false);
  });

  it('probes real processes: this one is alive, an exited child is not', () => {
    expect(probeProcess(process.pid).alive).toBe(true);
    expect(probeProcess(deadPid()).alive).toBe(false);
  });

  it("removes the directories of dead processes and of reused pids, keeps live processes' and foreign names", () => {
    const p = parent();
    const mine = makeProcessWorkDir(p, 'sluice-tm-').path;
    const ownTicks = workDirOwner(mine.slice(p.length + 1), 'sluice-tm-')!.startTicks;
    const parentPid = process.ppid;
    const parentTicks = probeProcess(parentPid).startTicks;
    const dead = join(p, `sluice-tm-${deadPid()}-${ownTicks ?? 'x'}-abcdef`);
    const liveOther = join(p, `sluice-tm-${parentPid}-${parentTicks ?? 'x'}-abcdef`);
    const reused = join(p, `sluice-tm-${parentPid}-${(parentTicks ?? 0) + 1}-abcdef`);
    const foreign = join(p, 'sluice-tm-abcdef');
    const otherPrefix = join(p, `sluice-jm-${deadPid()}-1-abcdef`);
    for (const d of [dead, liveOther, reused, foreign, otherPrefix]) mkdirSync(join(d, 'jobs'), { recursive: true });
    const removed = removeDeadProcessWorkDirs(p, 'sluice-tm-');
    const expectedRemoved = parentTicks === undefined ? [dead] : [dead, reused];
    expect(removed.sort()).toEqual(expectedRemoved.sort());
    for (const d of expectedRemoved) expect(existsSync(d)).toBe(false);
    for (const d of [mine, liveOther, foreign, otherPrefix]) expect(existsSync(d), d).toBe(true);
    // The next one made there sweeps too, and its own name says whose it is.
    const again = makeProcessWorkDir(p, 'sluice-jm-');
    expect(again.removed).toEqual([otherPrefix]);
    expect(workDirOwner(again.path.slice(p.length + 1), 'sluice-jm-')?.pid).toBe(process.pid);
    expect(readdirSync(p).sort()).toEqual([mine, liveOther, foreign, again.path].map((d) => d.slice(p.length + 1)).sort());
  });
});
