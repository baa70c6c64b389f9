import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirectories, makeDirectoriesSync } from './make-directories.js';

const root = mkdtempSync(join(tmpdir(), 'sluice-mkdirs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('makeDirectories', () => {
  it('creates every missing level, and is content with directories that exist', async () => {
    await makeDirectories(join(root, 'a', 'b', 'c'));
    expect(statSync(join(root, 'a', 'b', 'c')).isDirectory()).toBe(true);
    await makeDirectories(join(root, 'a', 'b', 'c'));
    makeDirectoriesSync(join(root, 'a', 'd'));
    expect(statSync(join(root, 'a', 'd')).isDirectory()).toBe(true);
  });

  it('a file on the path is ENOTDIR', async () => {
    writeFileSync(join(root, 'file'), 'x');
    await expect(makeDirectories(join(root, 'file', 'sub'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  // Node's mkdir(path, { recursive: true }) never settles here (it spins a core).
  it('a file system that refuses new directories (/proc) is an error at once, not a hang', async () => {
    await expect(makeDirectories('/proc/sluice-no-such-dir/checkpoints')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => makeDirectoriesSync('/proc/sluice-no-such-dir/checkpoints')).toThrow(/ENOENT/);
  });
});
