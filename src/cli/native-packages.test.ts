import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildJob } from '../cluster/job-bundle.js';
import { bundleJob } from './job-loader.js';
import { isNativePackage, packageName } from './native-packages.js';

const modules = resolve('node_modules');
const dir = mkdtempSync(join(tmpdir(), 'sluice-native-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('packages with native code in job bundles', () => {
  it('are told apart from pure JavaScript packages by their package.json and files', () => {
    expect(isNativePackage(join(modules, 'lmdb'))).toBe(true);
    expect(isNativePackage(join(modules, '@node-rs', 'crc32'))).toBe(true);
    expect(isNativePackage(join(modules, 'msgpackr-extract'))).toBe(true);
    expect(isNativePackage(join(modules, 'pg'))).toBe(false);
    expect(isNativePackage(join(modules, 'yaml'))).toBe(false);
    expect(isNativePackage(join(dir, 'no-such-package'))).toBe(false);
    expect(packageName('@node-rs/crc32/index.js')).toBe('@node-rs/crc32');
    expect(packageName('lmdb/dist/x.js')).toBe('lmdb');
  });

  it('stay out of the bundle, imported from where they are installed; pure JavaScript packages are bundled', async () => {
    const code = await bundleJob(resolve('test/fixtures/jobs/native-import.ts'), join(dir, 'native.mjs'));
    expect(code).toMatch(new RegExp(`from "file://${modules}/lmdb/[^"]+"`));
    expect(code).toMatch(new RegExp(`from "file://${modules}/@node-rs/crc32/[^"]+"`));
    const pure = await bundleJob(resolve('test/fixtures/jobs/commonjs-import.ts'), join(dir, 'pure.mjs'));
    expect(pure).not.toMatch(/file:\/\/[^"]*node_modules\/pg/);
    expect(pure).toMatch(/SASL: Only mechanism/); // pg's code is in the bundle
  });

  it('a TaskManager without the package at that path says what to install where', async () => {
    const file = join(dir, 'job-missing.mjs');
    writeFileSync(file, 'import { open } from "file:///nowhere/node_modules/lmdb/index.js";\nexport default open;\n');
    await expect(buildJob(file, [], [], 'job')).rejects.toThrow(
      /the job imports a package with native code, .*: \/nowhere\/node_modules\/lmdb\/index.js is not on this host\. Install the job's dependencies at the same path on every TaskManager host/,
    );
  });
});
