import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * File permissions are not enforced for root, and CI runs as root: a test of what a user
 * without access sees runs its body in a Node child process that is root without any
 * capability (setpriv, util-linux: no CAP_DAC_OVERRIDE, so the permission bits hold for it as
 * for any owner) when this process is root, as this user otherwise. Never skipped. Not as
 * `nobody`: a checkout in a directory only root may enter (mktemp -d) would be out of its reach.
 */
export const isRoot = process.getuid?.() === 0;

const WITHOUT_CAPABILITIES = ['--bounding-set=-all', '--inh-caps=-all', '--ambient-caps=-all', '--'];

/** Fresh directories the unprivileged child may write into; removed after the file's tests. */
export function unprivilegedDirs(prefix: string): () => string {
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

/**
 * Runs the fixture module `test/fixtures/unprivileged/<name>.mjs` with `args` without
 * capabilities (when root) and returns what it printed on stdout, parsed as JSON. Fixtures import the built
 * package from dist/ (`npm test` builds it first).
 */
export function runUnprivileged<T>(name: string, args: readonly string[]): T {
  const fixture = join(import.meta.dirname, '..', 'fixtures', 'unprivileged', `${name}.mjs`);
  const argv = [process.execPath, fixture, ...args];
  const r = isRoot ? spawnSync('setpriv', [...WITHOUT_CAPABILITIES, ...argv], { encoding: 'utf8' }) : spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`cannot run ${name}${isRoot ? ' without capabilities (setpriv, util-linux)' : ''}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `${name} exited ${r.status}${isRoot ? ' without capabilities' : ''}:\n${r.stderr}`,
    );
  }
  return JSON.parse(r.stdout) as T;
}
