import { constants } from 'node:fs';
import { copyFile, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { tempFileName } from './checkpoint-paths.js';
import { encodeHeader, recordedChecksum, type FileKind } from './checksummed-file.js';

/**
 * Writes `bytes` to `path` so that `path` either does not exist or holds all of them, even
 * across a crash: write a temp file in the same directory, fsync it, rename it over `path`.
 * The rename is durable only after the caller fsyncs the directory (fsyncDirectory), which
 * lets a caller writing several files pay for one directory fsync. A failure removes the
 * temp file when it can; a crash may leave it behind (`*.tmp`, never read as complete).
 */
export async function writeFileDurably(path: string, bytes: Uint8Array | readonly Uint8Array[], randomHex16: string): Promise<void> {
  await replaceDurably(path, randomHex16, async (temp) => {
    const handle = await open(temp, 'wx');
    try {
      if (bytes instanceof Uint8Array) await handle.writeFile(bytes);
      else await writeAll(handle, bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}

/**
 * Moves the complete file `from` to `path` as writeFileDurably writes one: renamed when both
 * are on one filesystem (no copy), else copied (the kernel copies: no bytes pass through this
 * heap) into a temp file beside `path`; the temp file is fsynced and renamed over `path`.
 * `from` is gone afterwards, also when the move failed. As with writeFileDurably, the caller
 * fsyncs the directory.
 */
export async function moveFileDurably(from: string, path: string, randomHex16: string): Promise<void> {
  try {
    await replaceDurably(path, randomHex16, async (temp) => {
      try {
        await rename(from, temp);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
        await copyFile(from, temp, constants.COPYFILE_EXCL);
      }
      const handle = await open(temp, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  } finally {
    await unlink(from).catch(() => undefined);
  }
}

/**
 * `fill` writes and fsyncs a temp file beside `path`, which is then renamed over `path`; on
 * failure the temp file is removed when it can be.
 */
async function replaceDurably(path: string, randomHex16: string, fill: (temp: string) => Promise<void>): Promise<void> {
  const temp = join(dirname(path), tempFileName(basename(path), randomHex16));
  let renamed = false;
  try {
    await fill(temp);
    await rename(temp, path);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/**
 * A checksummed file (checksummed-file.ts) of `kind` holding `payload`, written durably at
 * `path` (writeFileDurably); resolves with the payload's CRC-32C. The payload is not copied.
 */
export async function writeChecksummedFileDurably(path: string, payload: Uint8Array, kind: FileKind, randomHex16: string): Promise<number> {
  const header = encodeHeader(payload, kind);
  await writeFileDurably(path, [header, payload], randomHex16);
  return recordedChecksum(header);
}

/** Writes the chunks one after another (writev; a short write continues where it stopped). */
async function writeAll(handle: FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  let rest = chunks.filter((c) => c.length > 0);
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest as Uint8Array[]);
    while (rest.length > 0 && bytesWritten >= rest[0]!.length) {
      bytesWritten -= rest[0]!.length;
      rest = rest.slice(1);
    }
    if (rest.length > 0 && bytesWritten > 0) rest = [rest[0]!.subarray(bytesWritten), ...rest.slice(1)];
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
