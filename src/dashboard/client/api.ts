/** The REST API, relative to the page (so the dashboard also works behind a path prefix). */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'sluice.rest.token';
export const AUTH_NEEDED_EVENT = 'sluice:auth-needed';
export const REFRESH_EVENT = 'sluice:refresh';

export function setToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export async function api<T>(path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token !== null && token !== '') headers.authorization = `Bearer ${token}`;
  const init: RequestInit = { method: options.method ?? 'GET', headers };
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  const res = await fetch(path.replace(/^\//, ''), init);
  const json: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    if (res.status === 401) window.dispatchEvent(new Event(AUTH_NEEDED_EVENT));
    const errors = (json as { errors?: string[] } | undefined)?.errors;
    throw new ApiError(res.status, errors?.[0] ?? `${res.status} ${res.statusText}`);
  }
  return json as T;
}

/** Asks every page to load its data again now (after an action). */
export function refreshAll(): void {
  window.dispatchEvent(new Event(REFRESH_EVENT));
}

export interface Operation {
  status: { id: 'IN_PROGRESS' | 'COMPLETED' };
  operation?: { location?: string; 'failure-cause'?: { 'stack-trace': string } };
}

/** Polls an asynchronous operation (savepoint, stop) until it completed. */
export async function awaitOperation(path: string, timeoutMs = 10 * 60_000): Promise<Operation['operation']> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api<Operation>(path);
    if (r.status.id === 'COMPLETED') return r.operation;
    if (Date.now() > deadline) throw new Error(`still in progress after ${timeoutMs / 1000} s`);
    await new Promise((res) => setTimeout(res, 250));
  }
}
