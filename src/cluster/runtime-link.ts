import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Jobs import the built package (dist/), also when this module runs from src/ (tests).
const distDir = basename(packageDir) === 'src' ? resolve(packageDir, '..', 'dist') : packageDir;

/** The files of Sluice's entry points a job imports, in this process's installation. */
export const RUNTIME_ENTRY_POINTS: Readonly<Record<string, string>> = {
  sluice: join(distDir, 'index.js'),
  'sluice/connectors': join(distDir, 'connectors', 'index.js'),
};

/** The entry points a job bundle leaves as imports (`import ... from "sluice"`), to be linked where it runs. */
export const RUNTIME_SPECIFIER = /^sluice(\/connectors)?$/;

/** An import of an entry point in esbuild's output: `from "sluice"`, `import "sluice"`, `import("sluice/connectors")`. */
const RUNTIME_IMPORT = /(?<=\b(?:from|import)\s*\(?\s*)"(sluice(?:\/connectors)?)"/g;

/**
 * Links a job bundle to the Sluice of the process that runs it: its imports of `sluice` and
 * `sluice/connectors` become this installation's files. A bundle names the entry points, not
 * the submitting machine's paths, so a JobManager or TaskManager installed elsewhere (a
 * container, another host) runs it with its own Sluice, and the job's classes are the
 * runtime's (one module instance, so `defineJob` and the connectors are recognised).
 */
export function linkRuntime(code: string): string {
  return code.replace(RUNTIME_IMPORT, (_, specifier: string) => JSON.stringify(pathToFileURL(RUNTIME_ENTRY_POINTS[specifier]!).href));
}
