import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { tempFileName } from './checkpoint-paths.js';

/**
 * Writes `bytes` to `path` so that `path` either does not exist or holds all of them, even
 * across a crash: write a temp file in the same directory, fsync it, rename it over `path`.
 * The rename is durable only after the caller fsyncs the directory (fsyncDirectory), which
 * lets a caller writing several files pay for one directory fsync. A failure removes the
 * temp file when it can; a crash may leave it behind (`*.tmp`, never read as complete).
 */
export async function writeFileDurably(path: string, bytes: Uint8Array, randomHex16: string): Promise<void> {
  const temp = join(dirname(path), tempFileName(basename(path), randomHex16));
  let renamed = false;
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/** Makes the entries of `dir` (created, renamed, removed files) durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch (e) {
    // Windows cannot open a directory for fsync; its renames are durable on return.
    if (process.platform === 'win32') return;
    throw e;
  }
  try {
    await handle.sync();
  } catch (e) {
    if (process.platform !== 'win32') throw e;
  } finally {
    await handle.close();
  }
}
