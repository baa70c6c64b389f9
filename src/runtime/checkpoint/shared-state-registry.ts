import { assert } from '../../util/assert.js';
import { stateHandlesOf, type CheckpointMetadata, type StateHandle } from '../storage/snapshot-format.js';

/**
 * Reference counts of the files in the job's shared/ directory (Flink's SharedStateRegistry).
 * Incremental checkpoints reference files earlier checkpoints wrote; a file is deleted when
 * no retained or pending checkpoint references it any more. A checkpoint registers its
 * files when its subtasks' state is written (so a pending checkpoint holds on to the chain it
 * builds on) and unregisters them when it is aborted or discarded.
 *
 * Pure: it returns the files to delete; the coordinator deletes them.
 */
export class SharedStateRegistry {
  private readonly counts = new Map<string, number>();

  /** Adds one reference to each shared file among `handles` (a file listed twice counts twice). */
  register(paths: readonly string[]): void {
    for (const p of paths) this.counts.set(p, (this.counts.get(p) ?? 0) + 1);
  }

  /** Removes one reference each; returns the files no one references any more. */
  unregister(paths: readonly string[]): string[] {
    const free: string[] = [];
    for (const p of paths) {
      const n = this.counts.get(p);
      assert(n !== undefined && n > 0, `shared state file ${p} is unregistered more often than it was registered`);
      if (n === 1) {
        this.counts.delete(p);
        free.push(p);
      } else this.counts.set(p, n - 1);
    }
    return free;
  }

  /** Number of references of a file (0 when unknown); for tests. */
  references(path: string): number {
    return this.counts.get(path) ?? 0;
  }

  get size(): number {
    return this.counts.size;
  }
}

/** The shared files among some state handles, once per handle. */
export function sharedPaths(handles: Iterable<StateHandle>): string[] {
  const out: string[] = [];
  for (const h of handles) if (h.kind === 'file' && h.scope === 'shared') out.push(h.path);
  return out;
}

/** The shared files a snapshot references. */
export function sharedPathsOf(metadata: CheckpointMetadata): string[] {
  return sharedPaths(stateHandlesOf(metadata));
}
