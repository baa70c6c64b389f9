import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` for paths users give (checkpoint, savepoint, state and sink directories), one
 * level at a time. Node's own `mkdir(path, { recursive: true })` never returns for a path
 * under a file system that refuses new directories with ENOENT (`/proc/nope/dir` spins a core
 * forever); here that is the error it is. Synchronous: it runs once when a storage, backend or
 * sink opens, a few system calls.
 */
export function makeDirectoriesSync(path: string): void {
  const missing: string[] = [];
  for (let p = resolve(path); ; ) {
    try {
      if (!statSync(p).isDirectory()) {
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${p}'`), { code: 'ENOTDIR', path: p, syscall: 'mkdir' });
      }
      break;
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') throw e;
      missing.push(p);
      const parent = dirname(p);
      if (parent === p) break;
      p = parent;
    }
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (e) {
      if (errorCode(e) !== 'EEXIST') throw e;
    }
  }
}

/** makeDirectoriesSync, for async code paths. */
export function makeDirectories(path: string): Promise<void> {
  try {
    makeDirectoriesSync(path);
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e as Error);
  }
}

function errorCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}
