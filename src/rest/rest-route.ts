/** What the REST server's routes are made of; modules that add routes (metrics, dashboard) share it. */

/** A request the API answers with a 4xx: the message says what is wrong and how to fix it. */
export class RestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A non-JSON answer (the dashboard's files, Prometheus text). */
export class RawResponse {
  constructor(
    readonly contentType: string,
    readonly body: string | Uint8Array,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

export type RestHandler = (params: Record<string, string>, body: unknown, url: URL) => Promise<[number, unknown]> | [number, unknown];

export interface RestRoute {
  readonly method: 'GET' | 'POST' | 'PATCH';
  /** `/jobs/:jobid/...`; `:name` matches one path segment. */
  readonly path: string;
  readonly handler: RestHandler;
  /** Served without the bearer token (the dashboard's static files, which hold no job data). */
  readonly public?: boolean;
  /** Largest request body accepted; default MAX_BODY_BYTES (1 MiB). */
  readonly maxBodyBytes?: number;
}
