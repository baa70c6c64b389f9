import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * File permissions are not enforced for root, and CI runs as root: a test of what a user
 * without access sees runs its body in a Node child process as `nobody` (setpriv, util-linux)
 * when this process is root, as this user otherwise. Never skipped.
 */
export const isRoot = process.getuid?.() === 0;

const NOBODY = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];

function ids(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Fresh directories the unprivileged child may write into (owned by nobody when root); removed after the file's tests. */
export function unprivilegedDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    if (isRoot) {
      const { uid, gid } = ids();
      chownSync(d, uid, gid);
    }
    return d;
  };
}

/**
 * Runs the fixture module `test/fixtures/unprivileged/<name>.mjs` with `args` as nobody (when
 * root) and returns what it printed on stdout, parsed as JSON. Fixtures import the built
 * package from dist/ (`npm test` builds it first).
 */
export function runUnprivileged<T>(name: string, args: readonly string[]): T {
  const fixture = join(import.meta.dirname, '..', 'fixtures', 'unprivileged', `${name}.mjs`);
  const argv = [process.execPath, fixture, ...args];
  const r = isRoot ? spawnSync('setpriv', [...NOBODY, ...argv], { encoding: 'utf8' }) : spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`cannot run ${name}${isRoot ? ' as nobody (setpriv, util-linux)' : ''}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `${name} exited ${r.status}${isRoot ? ' as nobody: the checkout, dist/ and Node must be readable by every user (chmod o+rX)' : ''}:\n${r.stderr}`,
    );
  }
  return JSON.parse(r.stdout) as T;
}
