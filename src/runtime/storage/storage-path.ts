import { join } from 'node:path';

/**
 * Paths of checkpoint, savepoint and high-availability directories, which may be local paths
 * or URIs (`s3://bucket/prefix`). `path.join` turns a URI into a local path (`s3:/bucket/...`,
 * one slash fewer), so every path built under a configured directory goes through here. Pure.
 */

const URI = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Whether `path` is a URI with a scheme (`s3://...`, `jobmanager://...`) rather than a local path. */
export function isStorageUri(path: string): boolean {
  return URI.test(path);
}

/** `base` with `parts` under it: `/` between the parts of a URI, `path.join` for a local path. */
export function joinStoragePath(base: string, ...parts: readonly string[]): string {
  if (!isStorageUri(base)) return join(base, ...parts);
  const segments = parts.flatMap((p) => p.split('/')).filter((p) => p !== '' && p !== '.');
  if (segments.includes('..')) throw new Error(`a path under ${base} may not contain '..': ${parts.join('/')}`);
  const trimmed = base.replace(/\/+$/, '');
  // `s3://bucket/` trimmed keeps its `//`: only slashes after the authority go.
  const root = isStorageUri(trimmed) ? trimmed : base;
  return segments.length === 0 ? root : `${root}/${segments.join('/')}`;
}
