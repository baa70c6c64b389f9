/**
 * How operator state moves when the parallelism changes (Flink's
 * RoundRobinOperatorStateRepartitioner): split lists are concatenated and dealt out in
 * contiguous, even shares (the first `total % p` subtasks get one more); union lists go to
 * every subtask whole; broadcast state is copied from one subtask to all.
 */
export type OperatorStateMode = 'split' | 'union' | 'broadcast';

export function redistributeOperatorList<T>(mode: OperatorStateMode, perSubtask: readonly (readonly T[])[], newParallelism: number): T[][] {
  if (!Number.isInteger(newParallelism) || newParallelism < 1) throw new RangeError(`new parallelism must be an integer >= 1, got ${newParallelism}`);
  switch (mode) {
    case 'union': {
      const all = perSubtask.flat();
      return Array.from({ length: newParallelism }, () => [...all]);
    }
    case 'broadcast': {
      const first = perSubtask[0] ?? [];
      return Array.from({ length: newParallelism }, () => [...first]);
    }
    case 'split': {
      const all = perSubtask.flat();
      const base = Math.floor(all.length / newParallelism);
      const extra = all.length % newParallelism;
      const out: T[][] = [];
      let at = 0;
      for (let i = 0; i < newParallelism; i++) {
        const n = base + (i < extra ? 1 : 0);
        out.push(all.slice(at, at + n));
        at += n;
      }
      return out;
    }
  }
}
