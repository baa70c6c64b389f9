/**
 * Builds the web dashboard (part of `npm run build`): type-checks src/dashboard/client with its
 * own tsconfig (DOM, JSX), bundles it with esbuild into dist/dashboard/assets/, and copies the
 * page and the stylesheet. Everything the page needs is in that directory: no CDN.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
const client = `${root}src/dashboard/client/`;
const out = `${root}dist/dashboard/assets/`;

async function main(): Promise<void> {
  const started = performance.now();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const check = spawnSync(process.execPath, [tsc, '-p', `${client}tsconfig.json`], { stdio: 'inherit' });
  if (check.status !== 0) throw new Error('the dashboard does not type-check (see above)');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [`${client}main.tsx`],
    outfile: `${out}app.js`,
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'esm',
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(`${client}index.html`, `${out}index.html`);
  copyFileSync(`${client}app.css`, `${out}app.css`);
  process.stdout.write(`dashboard built into dist/dashboard/assets in ${Math.round(performance.now() - started)} ms\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
