import { fileURLToPath } from 'node:url';

/** The URI schemes of S3-compatible storage, as Flink's S3 file systems accept them. */
const S3_SCHEMES = ['s3', 's3a', 's3p'];

/**
 * A checkpoint, savepoint or high-availability directory as written in a configuration or on
 * the command line, in the form Sluice's storage takes: `s3://` (also s3a://, s3p://) as
 * given, `file:///abs/dir` (Flink's usual spelling, also `file:/abs/dir`) as the local path
 * `/abs/dir`, a path as given. Another scheme (hdfs://, gs://, ...) is an error naming what
 * Sluice stores to; so is a relative `file:` URI, which Flink would also refuse.
 */
export function normalizeStorageUri(text: string): string {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined || (scheme.length === 1 && /^[a-zA-Z]:[\\/]/.test(text))) return text; // a path (or a Windows drive)
  if (S3_SCHEMES.includes(scheme)) return text;
  if (scheme === 'file') {
    if (!/^file:(\/\/\/|\/(?!\/))/.test(text)) {
      throw new Error(`'${text}' is not an absolute file: URI; write file:///absolute/path (three slashes) or the path itself`);
    }
    return fileURLToPath(text.startsWith('file:///') ? text : `file://${text.slice('file:'.length)}`);
  }
  throw new Error(`'${text}': Sluice stores checkpoints and savepoints on local or shared file systems (a path or file:///path) and on S3-compatible storage (s3://bucket/prefix), not ${scheme}://`);
}
