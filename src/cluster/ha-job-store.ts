import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Configuration } from '../config/configuration.js';
import { isStorageUri, joinStoragePath } from '../runtime/storage/storage-path.js';
import { makeDirectoriesSync } from '../util/make-directories.js';

/**
 * Where a JobManager keeps the jobs it runs (`<high-availability directory>/<jobId>.json`),
 * so the next JobManager on the same directory takes them back: a local directory, or an
 * `s3://` prefix in the same bucket as the checkpoints (the default directory is under
 * execution.checkpointing.dir). A record is written whole or not at all: a temp file renamed
 * into place, or one S3 PUT.
 */
export interface HaJobStore {
  /** The directory, as configured (for messages). */
  readonly location: string;
  put(jobId: string, record: unknown): Promise<void>;
  remove(jobId: string): Promise<void>;
  /** Every record, parsed; a record that cannot be read or parsed fails the listing (naming it). */
  list(): Promise<{ jobId: string; record: unknown }[]>;
}

const RECORD_SUFFIX = '.json';

/** `dir`: the high-availability directory; `config`: the s3.* options, for an s3:// one. */
export async function openHaJobStore(dir: string, config: Configuration): Promise<HaJobStore> {
  if (!isStorageUri(dir)) return localHaJobStore(dir);
  const { parseS3Uri, isS3Uri } = await import('../runtime/storage/s3-client.js');
  if (!isS3Uri(dir)) throw new Error(`the high-availability directory ${dir} is neither a local directory nor s3://: set high-availability.storageDir to one`);
  const { s3ClientFrom } = await import('../runtime/storage/s3-checkpoint-storage.js');
  const client = s3ClientFrom(config);
  const { bucket, key } = parseS3Uri(dir);
  const keyOf = (jobId: string): string => (key === '' ? `${jobId}${RECORD_SUFFIX}` : `${key}/${jobId}${RECORD_SUFFIX}`);
  return {
    location: dir,
    put: (jobId, record) => client.put(bucket, keyOf(jobId), new TextEncoder().encode(JSON.stringify(record))),
    remove: (jobId) => client.delete(bucket, keyOf(jobId)),
    async list() {
      const { keys } = await client.list(bucket, key === '' ? '' : `${key}/`, '/');
      const out: { jobId: string; record: unknown }[] = [];
      for (const k of keys.filter((k) => k.endsWith(RECORD_SUFFIX))) {
        const bytes = await client.get(bucket, k);
        // Removed between the listing and the read: that job ended.
        if (bytes === undefined) continue;
        out.push({ jobId: k.slice(k.lastIndexOf('/') + 1, -RECORD_SUFFIX.length), record: parseRecord(new TextDecoder().decode(bytes), joinStoragePath(dir, k.slice(k.lastIndexOf('/') + 1))) });
      }
      return out;
    },
  };
}

function localHaJobStore(dir: string): HaJobStore {
  const file = (jobId: string): string => join(dir, `${jobId}${RECORD_SUFFIX}`);
  return {
    location: dir,
    async put(jobId, record) {
      makeDirectoriesSync(dir);
      const tmp = `${file(jobId)}.tmp`;
      await writeFile(tmp, JSON.stringify(record));
      await rename(tmp, file(jobId));
    },
    remove: (jobId) => rm(file(jobId), { force: true }),
    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw e;
      }
      const out: { jobId: string; record: unknown }[] = [];
      for (const n of names.filter((n) => n.endsWith(RECORD_SUFFIX))) {
        out.push({ jobId: n.slice(0, -RECORD_SUFFIX.length), record: parseRecord(await readFile(join(dir, n), 'utf8'), join(dir, n)) });
      }
      return out;
    },
  };
}

function parseRecord(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new Error(`the high-availability record ${where} is not JSON (${(e as Error).message}); remove it to start without that job`, { cause: e });
  }
}
