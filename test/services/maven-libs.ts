import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MavenLibs {
  /** A pom.xml whose dependencies are the jars to fetch. */
  readonly pom: string;
  /** Where the folders of jars go: `<cacheDir>/libs-<pom hash>`. */
  readonly cacheDir: string;
  /** What the jars are, for errors ("the Kafka broker's jars"). */
  readonly what: string;
  /** A jar that must be among them, by name. */
  readonly mainJar: RegExp;
  /** The error when `mvn` is missing: who needs it and the other way to run. */
  readonly withoutMaven: string;
}

/**
 * The folder of a service's jars, downloaded from Maven Central with Maven on first use (into a
 * temporary folder renamed when complete, so an interrupted or concurrent download never leaves
 * a half-filled cache).
 */
export function ensureMavenLibs(o: MavenLibs): string {
  const hash = createHash('sha256').update(readFileSync(o.pom)).digest('hex').slice(0, 12);
  const libs = join(o.cacheDir, `libs-${hash}`);
  if (existsSync(join(libs, '.complete'))) return libs;
  const mvn = spawnSync('mvn', ['-v'], { encoding: 'utf8' });
  if (mvn.error !== undefined || mvn.status !== 0) throw new Error(o.withoutMaven);
  mkdirSync(o.cacheDir, { recursive: true });
  const partial = mkdtempSync(join(o.cacheDir, `.partial-${hash}-`));
  try {
    const r = spawnSync('mvn', ['-q', '-B', '-f', o.pom, 'dependency:copy-dependencies', `-DoutputDirectory=${partial}`], { encoding: 'utf8', timeout: 10 * 60_000 });
    if (r.status !== 0) {
      throw new Error(`downloading ${o.what} failed (mvn -f ${o.pom} dependency:copy-dependencies, exit ${r.status ?? r.signal}):\n${(r.stdout + r.stderr).slice(-4000)}`);
    }
    if (!readdirSync(partial).some((f) => o.mainJar.test(f))) throw new Error(`mvn copied no jar matching ${o.mainJar} into ${partial}`);
    writeFileSync(join(partial, '.complete'), new Date().toISOString());
    try {
      renameSync(partial, libs);
    } catch (e) {
      // Another run completed the same download first: use that one.
      if (!existsSync(join(libs, '.complete'))) throw e;
    }
    return libs;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}
