import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isJobDefinition, type JobDefinition } from '../api/define-job.js';
import { CliError } from './cli-error.js';
import { nativePackagesExternal } from './native-packages.js';
import { linkRuntime, RUNTIME_ENTRY_POINTS, RUNTIME_SPECIFIER } from '../cluster/runtime-link.js';


/** The extensions of the job modules `sluice run` takes: TypeScript and JavaScript, as ES or CommonJS modules. */
export const JOB_FILE_EXTENSIONS: readonly string[] = ['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs', '.jsx'];

function checkJobFile(path: string): string {
  const file = resolve(path);
  if (!existsSync(file)) {
    throw new CliError(`job file not found: ${path} (resolved to ${file}); give the path of a .ts or .js job module`);
  }
  if (!statSync(file).isFile()) throw new CliError(`${path} is a directory; give the path of a job module such as ${join(path, 'job.ts')}`);
  const ext = extname(file);
  if (!JOB_FILE_EXTENSIONS.includes(ext)) {
    const accepted = `${JOB_FILE_EXTENSIONS.slice(0, -1).join(', ')} or ${JOB_FILE_EXTENSIONS.at(-1)}`;
    throw new CliError(`${path} is not a job module (${ext === '' ? 'it has no extension' : `a ${ext} file`}); give a TypeScript or JavaScript file ending in ${accepted}`, 2);
  }
  return file;
}

/**
 * The compiler options a job is checked with: those of the project's own tsconfig.json (the
 * nearest one above the job), so `sluice run` and the project's `tsc` agree; without one, the
 * options `sluice init` writes. Where 'sluice' does not resolve from the job (a job file
 * outside any project), it is mapped onto the running package's declarations.
 */
function jobCompilerOptions(ts: typeof import('typescript'), file: string): { options: import('typescript').CompilerOptions; configErrors: readonly import('typescript').Diagnostic[] } {
  const configFile = ts.findConfigFile(dirname(file), (f) => ts.sys.fileExists(f));
  let options: import('typescript').CompilerOptions;
  let configErrors: readonly import('typescript').Diagnostic[] = [];
  if (configFile !== undefined) {
    const parsed = ts.getParsedCommandLineOfConfigFile(configFile, { noEmit: true }, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        configErrors = [d];
      },
    });
    // A tsconfig whose `include` leaves the job out still gives its options (TS18003 is about files).
    configErrors = [...configErrors, ...(parsed?.errors ?? []).filter((d) => d.code !== 18003)];
    options = { ...(parsed?.options ?? {}), noEmit: true };
  } else {
    options = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    };
    const nodeTypes = ts.resolveTypeReferenceDirective('node', file, options, ts.sys).resolvedTypeReferenceDirective;
    options.types = nodeTypes === undefined ? [] : ['node'];
  }
  const unresolved = ['sluice', 'sluice/connectors'].filter((m) => ts.resolveModuleName(m, file, options, ts.sys).resolvedModule === undefined);
  if (unresolved.length > 0) {
    options.paths = {
      ...options.paths,
      sluice: [RUNTIME_ENTRY_POINTS.sluice!.replace(/\.js$/, '.d.ts')],
      'sluice/connectors': [RUNTIME_ENTRY_POINTS['sluice/connectors']!.replace(/\.js$/, '.d.ts')],
    };
    if (options.baseUrl === undefined && configFile === undefined) options.baseUrl = dirname(file);
  }
  return { options, configErrors };
}

/**
 * Type-checks a TypeScript job with its project's compiler options (see jobCompilerOptions);
 * returns "file:line:col - error TSnnnn: message" lines.
 */
export async function typeCheckJob(file: string): Promise<string[]> {
  const ts = (await import('typescript')).default;
  const { options, configErrors } = jobCompilerOptions(ts, file);
  const program = ts.createProgram([file], options);
  const diagnostics = [...configErrors, ...ts.getPreEmitDiagnostics(program)].filter((d) => d.category === ts.DiagnosticCategory.Error);
  return diagnostics.map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (d.file === undefined || d.start === undefined) return `error TS${d.code}: ${message}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${relative(process.cwd(), d.file.fileName)}:${line + 1}:${character + 1} - error TS${d.code}: ${message}`;
  });
}

/** Bundles a job module with its local imports into one ESM file (the form shipped to workers). */
export async function bundleJob(file: string, outfile: string): Promise<string> {
  const esbuild = await import('esbuild');
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [file],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      write: false,
      outfile,
      logLevel: 'silent',
      sourcemap: 'inline',
      // CommonJS packages the job imports (pg, most of npm) require Node's built-in modules:
      // an ESM bundle has no `require`, and esbuild's shim then throws "Dynamic require of
      // "events" is not supported". A real one, as Node gives CommonJS modules, fixes that.
      banner: { js: "import { createRequire as __sluiceCreateRequire } from 'node:module'; const require = __sluiceCreateRequire(import.meta.url);" },
      plugins: [
        {
          name: 'sluice-runtime',
          setup(build) {
            // Left as imports of the entry points, linked to the Sluice of each process that runs the bundle.
            build.onResolve({ filter: RUNTIME_SPECIFIER }, (args) => ({ path: args.path, external: true }));
          },
        },
        nativePackagesExternal((specifier) => RUNTIME_SPECIFIER.test(specifier)),
      ],
    });
  } catch (e) {
    const errors = (e as { errors?: { text: string; location?: { file: string; line: number; column: number } | null }[] }).errors ?? [];
    const lines = errors.map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1} - ${m.text}` : m.text));
    throw new CliError(`cannot compile ${relative(process.cwd(), file)}:\n${lines.join('\n') || (e as Error).message}`);
  }
  return result.outputFiles[0]!.text;
}

export interface LoadJobOptions {
  readonly typeCheck?: boolean;
}

/** A job module checked and bundled: the code shipped to a cluster, and its definition. */
export interface PreparedJob {
  readonly code: string;
  readonly definition: JobDefinition;
}

/** Finds, checks, bundles and imports a job module; returns its default export. */
export async function loadJob(path: string, options: LoadJobOptions = {}): Promise<JobDefinition> {
  return (await prepareJob(path, options)).definition;
}

/** Finds, checks, bundles and imports a job module; returns the bundle and its default export. */
export async function prepareJob(path: string, options: LoadJobOptions = {}): Promise<PreparedJob> {
  const file = checkJobFile(path);
  if (options.typeCheck !== false && /\.[cm]?tsx?$/.test(file)) {
    const errors = await typeCheckJob(file);
    if (errors.length > 0) {
      throw new CliError(`${path} has TypeScript errors:\n${errors.join('\n')}\nfix them, or run with --no-typecheck to skip the check`);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'sluice-job-'));
  const bundled = join(dir, 'job.mjs');
  let code: string;
  try {
    code = await bundleJob(file, bundled);
    writeFileSync(bundled, linkRuntime(code));
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(bundled).href)) as Record<string, unknown>;
  } catch (e) {
    throw new CliError(`${path} failed while loading: ${(e as Error).message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const job = mod.default;
  if (job === undefined) {
    throw new CliError(`${path} has no default export; end it with: export default defineJob((env, args) => { ... })`);
  }
  if (!isJobDefinition(job)) {
    throw new CliError(`the default export of ${path} is not a job; wrap the job in defineJob: export default defineJob((env, args) => { ... })`);
  }
  return { code, definition: job };
}
