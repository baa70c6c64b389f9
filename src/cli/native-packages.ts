import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';

/**
 * npm packages with native code (a compiled `.node` addon) cannot go into a job bundle: the
 * addon is a separate file, which the package finds next to its own code at run time (lmdb,
 * better-sqlite3, sharp, @node-rs/*...). The bundle refers to such a package where it is
 * installed instead, by absolute path: the TaskManagers load it from there, so it must be
 * installed at the same path on their hosts (always true for a cluster on one machine).
 */

/** Packages that find or build a native addon at run time. */
const NATIVE_LOADERS = new Set(['node-gyp-build', 'node-gyp-build-optional-packages', 'bindings', 'prebuild-install', 'node-pre-gyp', '@mapbox/node-pre-gyp', 'node-addon-api', 'nan', 'napi-build-utils']);

/** napi-rs and similar: the addon comes as an optional dependency per platform (`@node-rs/crc32-linux-x64-gnu`). */
const PLATFORM_PACKAGE = /-(linux|darwin|win32|freebsd|android)-(x64|arm64|ia32|arm|riscv64|s390x|ppc64|loong64)/;

interface PackageJson {
  readonly name?: string;
  readonly gypfile?: boolean;
  readonly binary?: unknown;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

/** Whether the package installed in `root` (its package.json's directory) carries native code. */
export function isNativePackage(root: string): boolean {
  let pkg: PackageJson;
  try {
    pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return false;
  }
  if (pkg.gypfile === true || pkg.binary !== undefined || existsSync(join(root, 'binding.gyp'))) return true;
  if (Object.keys(pkg.dependencies ?? {}).some((d) => NATIVE_LOADERS.has(d))) return true;
  if (Object.keys(pkg.optionalDependencies ?? {}).some((d) => PLATFORM_PACKAGE.test(d))) return true;
  try {
    return readdirSync(root).some((f) => f.endsWith('.node'));
  } catch {
    return false;
  }
}

/** The name of the package a bare import names: `lmdb` of `lmdb/dist/x.js`, `@node-rs/crc32` of `@node-rs/crc32`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The directory of the installed package `name` that holds `file`. */
function packageRoot(file: string, name: string): string | undefined {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (!existsSync(join(dir, 'package.json'))) continue;
    try {
      if ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson).name === name) return dir;
    } catch {
      // not a package.json we can read: keep looking up
    }
  }
  return undefined;
}

/**
 * An esbuild plugin that leaves packages with native code out of the bundle and imports them
 * by absolute path (a file URL for `import`, a path for `require`). `skip` names packages it
 * must not touch (Sluice's own entry points have their own plugin).
 */
export function nativePackagesExternal(skip: (specifier: string) => boolean): Plugin {
  const native = new Map<string, boolean>();
  return {
    name: 'sluice-native-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === 'sluice-native-packages' || args.path.startsWith('node:') || skip(args.path)) return undefined;
        const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'sluice-native-packages' });
        if (resolved.errors.length > 0 || resolved.external || resolved.path === '') return undefined;
        const name = packageName(args.path);
        const root = packageRoot(resolved.path, name);
        if (root === undefined) return undefined;
        let isNative = native.get(root);
        if (isNative === undefined) {
          isNative = isNativePackage(root);
          native.set(root, isNative);
        }
        if (!isNative) return undefined;
        const required = args.kind === 'require-call' || args.kind === 'require-resolve';
        return { path: required ? resolved.path : pathToFileURL(resolved.path).href, external: true };
      });
    },
  };
}
