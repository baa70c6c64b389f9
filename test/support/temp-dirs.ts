import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * A maker of fresh directories under the OS temp dir, named `<prefix>XXXXXX`; all of them are
 * removed after the test file's tests. Call it at the top level of a test file.
 */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/** The newest completed checkpoint (`chk-N` with a `_metadata`) a job left in `checkpoints`, or undefined. */
export function latestCheckpoint(checkpoints: string, jobId: string): string | undefined {
  const dir = join(checkpoints, jobId);
  if (!existsSync(dir)) return undefined;
  const chks = readdirSync(dir).filter((f) => /^chk-\d+$/.test(f) && existsSync(join(dir, f, '_metadata')));
  const newest = chks.sort((a, b) => Number(b.slice(4)) - Number(a.slice(4)))[0];
  return newest === undefined ? undefined : join(dir, newest);
}
