/**
 * Which retained checkpoint a restore uses: the newest readable one. Pure; the caller
 * probes readability (reads `_metadata`) and logs the result of describeFallbacks.
 */

export interface RestoreCandidate {
  readonly checkpointId: number;
  /** true when readable; false or the Error met while reading when not. */
  readonly readable: boolean | Error;
}

export interface SkippedCheckpoint {
  readonly checkpointId: number;
  readonly reason: string;
}

export interface RestoreChoice<C extends RestoreCandidate> {
  /** The newest readable candidate, or undefined when none is readable. */
  readonly chosen: C | undefined;
  /** Unreadable candidates newer than the chosen one (all of them when none is chosen), newest first. */
  readonly skipped: readonly SkippedCheckpoint[];
}

export function chooseCheckpointToRestore<C extends RestoreCandidate>(candidates: readonly C[]): RestoreChoice<C> {
  const newestFirst = [...candidates].sort((a, b) => b.checkpointId - a.checkpointId);
  for (let i = 1; i < newestFirst.length; i++) {
    if (newestFirst[i]!.checkpointId === newestFirst[i - 1]!.checkpointId) {
      throw new Error(`checkpoint ${newestFirst[i]!.checkpointId} is a restore candidate twice`);
    }
  }
  const skipped: SkippedCheckpoint[] = [];
  for (const c of newestFirst) {
    if (c.readable === true) return { chosen: c, skipped };
    skipped.push({ checkpointId: c.checkpointId, reason: c.readable === false ? 'unreadable' : c.readable.message });
  }
  return { chosen: undefined, skipped };
}

/**
 * One line per skipped checkpoint, e.g. "checkpoint 9 cannot be read (...), falling back to
 * checkpoint 8", or "..., and no older checkpoint is readable".
 */
export function describeFallbacks(choice: RestoreChoice<RestoreCandidate>): string[] {
  const target = choice.chosen === undefined ? 'and no older checkpoint is readable' : `falling back to checkpoint ${choice.chosen.checkpointId}`;
  return choice.skipped.map((s) => `checkpoint ${s.checkpointId} cannot be read (${s.reason}), ${target}`);
}
