/**
 * `sluice init <dir>`: writes a new project from templates/starter (a first job, its test,
 * package.json, tsconfig.json, .gitignore, README). The project depends on this very Sluice:
 * the registry version, or the tarball, git URL or directory it was installed from, so the
 * project installs the Sluice that wrote it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from './cli-error.js';

export const INIT_USAGE = 'usage: sluice init <dir> [--name <package-name>] [--sluice <npm-spec>] [--force]';

/** The Sluice package's root: two directories up from src/cli or dist/cli. */
const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const templateDir = join(packageDir, 'templates', 'starter');

/** Template files whose name npm would not ship as it is (npm pack drops `.gitignore`). */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

interface PackageJson {
  readonly version: string;
  readonly engines?: { readonly node?: string };
  readonly dependencies?: Readonly<Record<string, string>>;
}

export interface InitOptions {
  readonly dir: string;
  readonly name?: string | undefined;
  readonly sluiceSpec?: string | undefined;
  readonly force?: boolean;
}

export interface InitResult {
  readonly dir: string;
  readonly files: readonly string[];
  readonly sluiceSpec: string;
  readonly sluiceSpecSource: string;
}

function parseInitArgs(argv: readonly string[]): InitOptions {
  let dir: string | undefined;
  let name: string | undefined;
  let sluiceSpec: string | undefined;
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new CliError(`${a} needs a value\n${INIT_USAGE}`, 2);
      return v;
    };
    if (a === '--name') name = value();
    else if (a === '--sluice') sluiceSpec = value();
    else if (a === '--force') force = true;
    else if (a.startsWith('-')) throw new CliError(`unknown option ${a}\n${INIT_USAGE}`, 2);
    else if (dir === undefined) dir = a;
    else throw new CliError(`one directory only (got '${dir}' and '${a}')\n${INIT_USAGE}`, 2);
  }
  if (dir === undefined) throw new CliError(`give the directory of the new project, e.g. sluice init my-job\n${INIT_USAGE}`, 2);
  return { dir, name, sluiceSpec, force };
}

/** npm's rules for a package name (lower case, URL-safe, at most 214 characters). */
function checkPackageName(name: string): void {
  if (name.length === 0 || name.length > 214 || !/^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/.test(name)) {
    throw new CliError(`'${name}' is not a valid npm package name (lower-case letters, digits, '-', '.', '_', '~'); give one with --name`, 2);
  }
}

function derivedName(dir: string): string {
  return basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9-._~]+/g, '-').replace(/^[-._]+/, '') || 'sluice-job';
}

/**
 * Where the running Sluice came from, as an npm dependency spec: the tarball or git URL npm
 * recorded when it installed it (node_modules/.package-lock.json, also npx's cache), a
 * directory for a checkout of the repository, else the version from the registry.
 */
export function installedSluiceSpec(pkg: PackageJson, dir = packageDir): { spec: string; source: string } {
  const nodeModules = dirname(dir);
  if (basename(nodeModules) === 'node_modules') {
    const lockFile = join(nodeModules, '.package-lock.json');
    if (existsSync(lockFile)) {
      try {
        const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages?: Record<string, { resolved?: string }> };
        const projectRoot = dirname(nodeModules);
        const key = relative(projectRoot, dir).split(sep).join('/');
        const resolved = lock.packages?.[key]?.resolved;
        if (resolved !== undefined && resolved.startsWith('file:')) {
          const target = resolve(projectRoot, resolved.slice('file:'.length));
          return { spec: `file:${target}`, source: `the tarball this Sluice was installed from` };
        }
        if (resolved !== undefined && /^(git\+|git:|github:|https?:\/\/.*\.git)/.test(resolved)) {
          return { spec: resolved, source: 'the git URL this Sluice was installed from' };
        }
      } catch {
        // An unreadable lock file: fall back to the registry version.
      }
    }
    return { spec: `^${pkg.version}`, source: 'the npm registry' };
  }
  if (existsSync(join(dir, '.git'))) return { spec: `file:${dir}`, source: 'this checkout of the Sluice repository (built with npm run build)' };
  return { spec: `^${pkg.version}`, source: 'the npm registry' };
}

/** Writes the starter project; refuses a directory that has files unless `force`. */
export function initProject(o: InitOptions): InitResult {
  const dir = resolve(o.dir);
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new CliError(`${o.dir} exists and is not a directory; give a new directory or an empty one`);
    const present = readdirSync(dir);
    if (present.length > 0 && o.force !== true) {
      const shown = present.slice(0, 5).join(', ') + (present.length > 5 ? `, ... (${present.length} in all)` : '');
      throw new CliError(`${o.dir} is not empty (${shown}); give a new directory, or --force to write the starter files over what is there`);
    }
  }
  if (!existsSync(templateDir)) throw new CliError(`the starter templates are missing from this Sluice installation (${templateDir}); reinstall sluice`);
  const name = o.name ?? derivedName(o.dir);
  checkPackageName(name);
  const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as PackageJson;
  const installed = o.sluiceSpec === undefined ? installedSluiceSpec(pkg) : { spec: o.sluiceSpec, source: '--sluice' };
  const values: Readonly<Record<string, string>> = {
    name,
    engines: pkg.engines?.node ?? '>=22.19.0',
    sluiceSpec: installed.spec,
    typescriptSpec: pkg.dependencies?.typescript ?? '~5.9.3',
    typesNodeSpec: '^22.19.0',
  };
  const files: string[] = [];
  const copy = (from: string, to: string): void => {
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const source = join(from, entry.name);
      const target = join(to, RENAMED[entry.name] ?? entry.name);
      if (entry.isDirectory()) {
        mkdirSync(target, { recursive: true });
        copy(source, target);
        continue;
      }
      const text = readFileSync(source, 'utf8').replace(/\{\{(\w+)\}\}/g, (whole, key: string) => {
        const v = values[key];
        if (v === undefined) throw new Error(`starter template ${source}: unknown placeholder ${whole}`);
        // Every value lands inside a JSON string in package.json: escaped as one.
        return JSON.stringify(v).slice(1, -1);
      });
      writeFileSync(target, text);
      files.push(relative(dir, target));
    }
  };
  mkdirSync(dir, { recursive: true });
  copy(templateDir, dir);
  return { dir, files: files.sort(), sluiceSpec: installed.spec, sluiceSpecSource: installed.source };
}

/** `sluice init <dir>`: writes the project and says what to run next. */
export async function initCommand(argv: readonly string[]): Promise<number> {
  const r = initProject(parseInitArgs(argv));
  const shown = relative(process.cwd(), r.dir) || '.';
  process.stdout.write(
    [
      `Wrote a Sluice project in ${shown}:`,
      ...r.files.map((f) => `  ${f}`),
      `It depends on sluice ${r.sluiceSpec} (${r.sluiceSpecSource}; --sluice <spec> chooses another).`,
      '',
      'Next:',
      ...(shown === '.' ? [] : [`  cd ${shown}`]),
      '  npm install',
      '  npm test      # type-checks, then runs the job\'s test in this process',
      '  npm start     # runs src/job.ts on a local cluster',
      '',
    ].join('\n'),
  );
  return 0;
}
