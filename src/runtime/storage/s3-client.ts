import { AwsClient } from 'aws4fetch';
import type { Configuration } from '../../config/configuration.js';
import { assert } from '../../util/assert.js';
import { CheckpointStorageError } from './storage-errors.js';

/**
 * A small S3 client over fetch, signed with AWS Signature V4 (aws4fetch): the handful of
 * calls checkpoint storage needs (GET, PUT, HEAD, DELETE, ListObjectsV2, multipart upload),
 * with retries and exponential backoff. Works with AWS S3 and any S3-compatible store.
 */

export interface S3Settings {
  /** Endpoint URL without a trailing slash, e.g. http://127.0.0.1:9000 or https://s3.eu-west-1.amazonaws.com. */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly region: string;
  readonly pathStyleAccess: boolean;
  /** Files larger than this go up in parts of this size. */
  readonly partSizeBytes: number;
  readonly retryLimit: number;
  readonly retryIntervalMs: number;
}

export const S3_PART_SIZE_BYTES_DEFAULT = 5 * 1024 * 1024;
const RETRY_DELAY_MAX_MS = 10_000;
/** A request that has not completed after this long is abandoned and retried. */
const REQUEST_TIMEOUT_MS = 120_000;

/** s3.* options, falling back to the usual AWS_* variables. */
export function s3SettingsFrom(config: Configuration | undefined, env: NodeJS.ProcessEnv = process.env): S3Settings {
  const str = (key: string): string | undefined => {
    const v = config?.getString(key);
    return v === undefined || v === '' ? undefined : v;
  };
  const region = str('s3.region') ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1';
  const endpoint = str('s3.endpoint') ?? env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'] ?? `https://s3.${region}.amazonaws.com`;
  const accessKeyId = str('s3.access-key') ?? env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = str('s3.secret-key') ?? env['AWS_SECRET_ACCESS_KEY'];
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    throw new CheckpointStorageError(
      'not-writable',
      `no S3 credentials: set s3.access-key and s3.secret-key (or the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment variables)`,
    );
  }
  const sessionToken = str('s3.access-key') === undefined ? env['AWS_SESSION_TOKEN'] : undefined;
  const withEndpoint = /^https?:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`;
  return {
    endpoint: withEndpoint.replace(/\/+$/, ''),
    accessKeyId,
    secretAccessKey,
    ...(sessionToken === undefined || sessionToken === '' ? {} : { sessionToken }),
    region,
    pathStyleAccess: config?.getBoolean('s3.path.style.access') ?? false,
    partSizeBytes: config?.getNumber('s3.upload.min.part.size') ?? S3_PART_SIZE_BYTES_DEFAULT,
    retryLimit: config?.getNumber('s3.retry.limit') ?? 5,
    retryIntervalMs: config?.getNumber('s3.retry.interval') ?? 200,
  };
}

/** `s3://bucket/some/prefix` (also s3a://, s3p://, as Flink accepts them). */
export interface S3Location {
  readonly bucket: string;
  /** Without leading or trailing '/'; '' for the bucket's root. */
  readonly key: string;
}

const S3_URI = /^s3[ap]?:\/\/([^/]+)(?:\/(.*))?$/i;

export function isS3Uri(path: string): boolean {
  return S3_URI.test(path);
}

export function parseS3Uri(uri: string): S3Location {
  const m = S3_URI.exec(uri);
  if (m === null) throw new Error(`not an s3:// URI: ${uri}`);
  const key = (m[2] ?? '').split('/').filter((p) => p !== '' && p !== '.').join('/');
  if (key.split('/').includes('..')) throw new Error(`an s3:// URI may not contain '..': ${uri}`);
  return { bucket: m[1]!, key };
}

export function s3Uri(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/** An S3 error response: HTTP status, S3 error code (NoSuchKey, AccessDenied, ...), message. */
export class S3RequestError extends Error {
  override readonly name = 'S3RequestError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly uri: string,
  ) {
    super(message);
  }
}

function retriable(status: number, code: string): boolean {
  return status >= 500 || status === 408 || status === 429 || code === 'SlowDown' || code === 'RequestTimeout' || code === 'InternalError';
}

interface RequestOptions {
  readonly method: 'GET' | 'PUT' | 'HEAD' | 'DELETE' | 'POST';
  readonly bucket: string;
  readonly key: string;
  readonly query?: Record<string, string>;
  readonly body?: Uint8Array | string;
  readonly headers?: Record<string, string>;
}

export class S3Client {
  private readonly aws: AwsClient;

  constructor(
    readonly settings: S3Settings,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.aws = new AwsClient({
      accessKeyId: settings.accessKeyId,
      secretAccessKey: settings.secretAccessKey,
      ...(settings.sessionToken === undefined ? {} : { sessionToken: settings.sessionToken }),
      region: settings.region,
      service: 's3',
      retries: 0,
    });
  }

  url(bucket: string, key: string, query?: Record<string, string>): string {
    const path = key.split('/').map(encodeURIComponent).join('/');
    const e = new URL(this.settings.endpoint);
    const base = this.settings.pathStyleAccess ? `${e.origin}${e.pathname.replace(/\/$/, '')}/${bucket}` : `${e.protocol}//${bucket}.${e.host}${e.pathname.replace(/\/$/, '')}`;
    const qs = query === undefined ? '' : `?${Object.entries(query).map(([k, v]) => (v === '' ? encodeURIComponent(k) : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)).join('&')}`;
    return `${base}/${path}${qs}`;
  }

  /** One request with retries; resolves with the response of a 2xx, throws S3RequestError otherwise. 404 resolves as undefined when `allowNotFound`. */
  private async request(o: RequestOptions, allowNotFound = false): Promise<Response | undefined> {
    const url = this.url(o.bucket, o.key, o.query);
    const uri = s3Uri(o.bucket, o.key);
    for (let attempt = 0; ; attempt++) {
      let failure: S3RequestError;
      try {
        const init: RequestInit = { method: o.method, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(o.headers === undefined ? {} : { headers: o.headers }) };
        if (o.body !== undefined) init.body = o.body;
        const response = await this.aws.fetch(url, init);
        if (response.ok) return response;
        const text = o.method === 'HEAD' ? '' : await response.text();
        const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? (response.status === 404 ? 'NotFound' : `HTTP${response.status}`);
        const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? response.statusText;
        if (response.status === 404 && allowNotFound && code !== 'NoSuchBucket') return undefined;
        failure = new S3RequestError(response.status, code, `${o.method} ${uri}: HTTP ${response.status} ${code}${message ? `: ${message}` : ''}`, uri);
        if (!retriable(response.status, code)) throw failure;
      } catch (e) {
        if (e instanceof S3RequestError && !retriable(e.status, e.code)) throw e;
        failure = e instanceof S3RequestError ? e : new S3RequestError(0, 'NetworkError', `${o.method} ${uri}: ${networkMessage(e)} (endpoint ${this.settings.endpoint})`, uri);
      }
      if (attempt >= this.settings.retryLimit) {
        throw new S3RequestError(failure.status, failure.code, `${failure.message}; gave up after ${attempt + 1} attempts`, uri);
      }
      const delay = Math.min(RETRY_DELAY_MAX_MS, this.settings.retryIntervalMs * 2 ** attempt);
      await this.sleep(delay / 2 + Math.random() * (delay / 2));
    }
  }

  /** The object's bytes, or undefined when it does not exist. */
  async get(bucket: string, key: string): Promise<Uint8Array | undefined> {
    const r = await this.request({ method: 'GET', bucket, key }, true);
    return r === undefined ? undefined : new Uint8Array(await r.arrayBuffer());
  }

  /** The object's size, or undefined when it does not exist. */
  async head(bucket: string, key: string): Promise<number | undefined> {
    const r = await this.request({ method: 'HEAD', bucket, key }, true);
    return r === undefined ? undefined : Number(r.headers.get('content-length') ?? '0');
  }

  /** Writes the object whole (a single PUT, or a multipart upload above the part size); it appears at once or not at all. */
  async put(bucket: string, key: string, bytes: Uint8Array): Promise<void> {
    if (bytes.length > this.settings.partSizeBytes) return this.putMultipart(bucket, key, slices(bytes, this.settings.partSizeBytes));
    const r = await this.request({ method: 'PUT', bucket, key, body: bytes, headers: { 'content-type': 'application/octet-stream' } });
    await r?.arrayBuffer();
  }

  /** Size of the parts of a multipart upload (s3.upload.min.part.size): what `putPieces` expects its pieces to be. */
  get partSizeBytes(): number {
    return this.settings.partSizeBytes;
  }

  /**
   * As `put`, for an object of `sizeBytes` given in pieces of `partSizeBytes` (the last one
   * shorter) that are not in memory together (a file read part by part): one PUT up to the
   * part size, else a multipart upload with a piece per part.
   */
  async putPieces(bucket: string, key: string, sizeBytes: number, pieces: AsyncIterable<Uint8Array>): Promise<void> {
    const checked = checkedPieces(pieces, sizeBytes, this.settings.partSizeBytes, s3Uri(bucket, key));
    if (sizeBytes > this.settings.partSizeBytes) return this.putMultipart(bucket, key, checked);
    const all: Uint8Array[] = [];
    for await (const p of checked) all.push(p);
    await this.put(bucket, key, all.length === 1 ? all[0]! : Buffer.concat(all));
  }

  /** Creates a bucket (tests and tools; checkpoint storage expects its bucket to exist). */
  async createBucket(bucket: string): Promise<void> {
    const r = await this.request({ method: 'PUT', bucket, key: '' });
    await r?.arrayBuffer();
  }

  /** Idempotent: deleting a missing object succeeds. */
  async delete(bucket: string, key: string): Promise<void> {
    const r = await this.request({ method: 'DELETE', bucket, key }, true);
    await r?.arrayBuffer();
  }

  /** Keys under `prefix` (ListObjectsV2, every page); `delimiter` '/' gives the common prefixes too. */
  async list(bucket: string, prefix: string, delimiter?: string): Promise<{ keys: string[]; prefixes: string[] }> {
    const keys: string[] = [];
    const prefixes: string[] = [];
    let token: string | undefined;
    do {
      const query: Record<string, string> = { 'list-type': '2', prefix };
      if (delimiter !== undefined) query['delimiter'] = delimiter;
      if (token !== undefined) query['continuation-token'] = token;
      const r = await this.request({ method: 'GET', bucket, key: '', query });
      const xml = await r!.text();
      for (const m of xml.matchAll(/<Contents>[\s\S]*?<Key>([^<]*)<\/Key>[\s\S]*?<\/Contents>/g)) keys.push(xmlText(m[1]!));
      for (const m of xml.matchAll(/<CommonPrefixes>\s*<Prefix>([^<]*)<\/Prefix>/g)) prefixes.push(xmlText(m[1]!));
      const truncated = /<IsTruncated>true<\/IsTruncated>/.test(xml);
      token = truncated ? xmlText(/<NextContinuationToken>([^<]*)<\/NextContinuationToken>/.exec(xml)?.[1] ?? '') : undefined;
      if (truncated && token === '') throw new Error(`listing s3://${bucket}/${prefix}: truncated without a continuation token`);
    } while (token !== undefined);
    return { keys, prefixes };
  }

  /** Multipart upload: parts of `partSizeBytes`, then complete; aborted (parts removed) on failure. */
  private async putMultipart(bucket: string, key: string, parts: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    const created = await this.request({ method: 'POST', bucket, key, query: { uploads: '' }, headers: { 'content-type': 'application/octet-stream' } });
    const uploadId = xmlText(/<UploadId>([^<]*)<\/UploadId>/.exec(await created!.text())?.[1] ?? '');
    if (uploadId === '') throw new S3RequestError(0, 'MalformedResponse', `POST ${s3Uri(bucket, key)}?uploads: no UploadId in the response`, s3Uri(bucket, key));
    try {
      const etags: string[] = [];
      let part = 0;
      for await (const body of parts) {
        part++;
        const r = await this.request({ method: 'PUT', bucket, key, query: { partNumber: String(part), uploadId }, body });
        await r!.arrayBuffer();
        const etag = r!.headers.get('etag');
        if (etag === null) throw new S3RequestError(0, 'MalformedResponse', `PUT part ${part} of ${s3Uri(bucket, key)}: no ETag in the response`, s3Uri(bucket, key));
        etags.push(etag);
      }
      const body = `<CompleteMultipartUpload>${etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${xmlEscape(e)}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
      const done = await this.request({ method: 'POST', bucket, key, query: { uploadId }, body, headers: { 'content-type': 'application/xml' } });
      // S3 may answer 200 with an error document when completing fails late.
      const text = await done!.text();
      if (/<Error>/.test(text)) {
        const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? 'InternalError';
        throw new S3RequestError(500, code, `completing the multipart upload of ${s3Uri(bucket, key)} failed: ${code}`, s3Uri(bucket, key));
      }
    } catch (e) {
      await this.request({ method: 'DELETE', bucket, key, query: { uploadId } }, true).then(
        (r) => r?.arrayBuffer(),
        () => undefined,
      );
      throw e;
    }
  }
}

/** `bytes` in parts of `size` bytes (views). */
function* slices(bytes: Uint8Array, size: number): Iterable<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, Math.min(bytes.length, at + size));
}

/** The pieces, checked to be whole parts (but the last) adding up to `sizeBytes`: S3 would store a wrong object otherwise. */
async function* checkedPieces(pieces: AsyncIterable<Uint8Array>, sizeBytes: number, partSizeBytes: number, uri: string): AsyncIterable<Uint8Array> {
  let total = 0;
  let short = false;
  for await (const p of pieces) {
    assert(!short && p.length > 0 && p.length <= partSizeBytes, `the pieces of ${uri} are parts of ${partSizeBytes} bytes but the last (got ${p.length} after ${total})`);
    short = p.length < partSizeBytes;
    total += p.length;
    yield p;
  }
  assert(total === sizeBytes, `the pieces of ${uri} add up to its ${sizeBytes} bytes, not ${total}`);
}

function networkMessage(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return `${(e as Error).message ?? String(e)}${detail === undefined ? '' : ` (${detail})`}`;
}

function xmlText(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
