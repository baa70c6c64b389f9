import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RawResponse, RestError } from '../rest/rest-route.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Where `npm run build` put the dashboard: `dist/dashboard/assets/` beside the compiled
 * module, or, when running from the sources (tests), the repository's `dist/`.
 */
export function dashboardAssetsDir(): string | undefined {
  for (const rel of ['./assets/', '../../dist/dashboard/assets/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return undefined;
}

/** The dashboard's built files, read once; answers `/` and `/assets/<file>`. */
export class StaticAssets {
  private files: Map<string, Uint8Array> | undefined;

  constructor(private readonly dir: string | undefined = dashboardAssetsDir()) {}

  private load(): Map<string, Uint8Array> {
    if (this.files !== undefined) return this.files;
    const files = new Map<string, Uint8Array>();
    if (this.dir !== undefined) {
      for (const name of readdirSync(this.dir)) files.set(name, readFileSync(`${this.dir}${name}`));
    }
    this.files = files;
    return files;
  }

  get(name: string): RawResponse {
    const files = this.load();
    if (files.size === 0) {
      throw new RestError(404, 'the dashboard is not built: run npm run build (it bundles src/dashboard/client into dist/dashboard/assets)');
    }
    const body = files.get(name);
    if (body === undefined) throw new RestError(404, `no dashboard file ${name}`);
    const ext = name.slice(name.lastIndexOf('.'));
    return new RawResponse(CONTENT_TYPES[ext] ?? 'application/octet-stream', body, { 'cache-control': name === 'index.html' ? 'no-cache' : 'max-age=60' });
  }
}
