// Builds bench/flink (Flink 2.3's DataStream API, Maven Central's jars) once per content: the
// jar and its classpath are cached under .cache/flink-nexmark/<hash of pom.xml and sources>/.
// `node bench/flink/build.js` prints the java command's classpath.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sourceFiles(join(dir, d.name)) : [join(dir, d.name)]));
}

/** The hash of everything the build reads. */
export function flinkBuildHash() {
  const h = createHash('sha256');
  for (const f of [join(here, 'pom.xml'), ...sourceFiles(join(here, 'src')).sort()]) {
    h.update(relative(here, f)).update('\0').update(readFileSync(f)).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

/**
 * The classpath of the built program (its jar, then Flink's), building it first unless the
 * cache has it. Needs Java 17 and Maven (the first build downloads Flink's jars from Maven Central).
 */
export function flinkClasspath({ log = (m) => console.error(m) } = {}) {
  const cache = join(root, '.cache', 'flink-nexmark', flinkBuildHash());
  const jar = join(cache, 'nexmark-flink.jar');
  const cpFile = join(cache, 'classpath.txt');
  if (!existsSync(jar) || !existsSync(cpFile)) {
    log(`building bench/flink with Maven into ${relative(root, cache)}`);
    const target = join(cache, 'target');
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(cache, { recursive: true });
    const mvn = (args) => execFileSync('mvn', ['-q', '-B', '-f', join(here, 'pom.xml'), `-DbuildDirectory=${target}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    try {
      mvn(['package', '-DskipTests']);
      mvn(['dependency:build-classpath', `-Dmdep.outputFile=${join(cache, 'deps.txt')}`]);
    } catch (e) {
      throw new Error(`building bench/flink failed (needs Java 17 and Maven with Maven Central): ${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`);
    }
    copyFileSync(join(target, 'nexmark-flink-1.0.jar'), jar);
    rmSync(target, { recursive: true, force: true });
    writeFileSync(cpFile, readFileSync(join(cache, 'deps.txt'), 'utf8').trim());
  }
  return `${jar}:${readFileSync(cpFile, 'utf8').trim()}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(flinkClasspath());
