import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { ConfigError, Configuration, type ConfigValue } from './configuration.js';

/** The configuration file's name in its directory, as Flink's (`conf/config.yaml`). */
export const CONFIG_FILE_NAME = 'config.yaml';
/** Flink's configuration file before 1.19 (flat `key: value` lines), read by Flink 1.x only. */
const LEGACY_CONFIG_FILE_NAME = 'flink-conf.yaml';

export interface ConfigFile {
  readonly path: string;
  /** Keys as dotted paths, in the file's order. */
  readonly entries: readonly (readonly [string, ConfigValue])[];
}

/**
 * Where the configuration file is: `$SLUICE_CONF_DIR/config.yaml` (as Flink's
 * `$FLINK_CONF_DIR`), else `conf/config.yaml` in the working directory. Undefined when there
 * is none at the default place; a SLUICE_CONF_DIR without the file is an error.
 */
export function configFilePath(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string | undefined {
  const dir = env.SLUICE_CONF_DIR;
  if (dir !== undefined && dir !== '') {
    const path = join(resolve(cwd, dir), CONFIG_FILE_NAME);
    if (!existsSync(path)) {
      checkNoLegacyFile(resolve(cwd, dir));
      throw new ConfigError(`SLUICE_CONF_DIR is ${dir}, but ${path} does not exist: create it, or unset SLUICE_CONF_DIR`);
    }
    return path;
  }
  const path = join(cwd, 'conf', CONFIG_FILE_NAME);
  if (existsSync(path)) return path;
  checkNoLegacyFile(join(cwd, 'conf'));
  return undefined;
}

/**
 * A directory with Flink's legacy `flink-conf.yaml` and no `config.yaml`: its settings would
 * be ignored without a word (Flink 2 reads only config.yaml too).
 */
function checkNoLegacyFile(dir: string): void {
  const legacy = join(dir, LEGACY_CONFIG_FILE_NAME);
  if (!existsSync(legacy)) return;
  throw new ConfigError(
    `${legacy} is Flink's legacy configuration file, which Sluice does not read (nor does Flink 2): its settings go in ${join(dir, CONFIG_FILE_NAME)}. ` +
      `Rename it to ${CONFIG_FILE_NAME}: its flat 'key: value' lines are valid there`,
  );
}

/**
 * Reads a YAML configuration file as Flink's config.yaml: nested maps and dotted keys are the
 * same (`execution: {checkpointing: {interval: 10s}}` is `execution.checkpointing.interval:
 * 10s`); values are scalars. Every key and value is checked as `-D` checks them; an error
 * names the file, the line and the key.
 */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read the configuration file ${path}: ${(e as Error).message}`);
  }
  return parseConfigText(text, path);
}

/** Parses configuration YAML; `path` names where it came from in errors (a file, or an environment variable). */
export function parseConfigText(text: string, path: string): ConfigFile {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error !== undefined) {
    // The yaml library's message told the reader to call one of its functions.
    if (error.code === 'MULTIPLE_DOCS') {
      throw new ConfigError(`${path}:${error.linePos?.[0].line ?? '?'}: a second YAML document starts here ('---'); the configuration is one document: remove the '---' line and keep one set of keys`);
    }
    throw new ConfigError(`${path} is not valid YAML: ${error.message}`);
  }
  const lineOf = (node: Node | null | undefined): string => {
    const offset = node?.range?.[0];
    if (offset === undefined) return '';
    return `:${text.slice(0, offset).split('\n').length}`;
  };
  const entries: [string, ConfigValue][] = [];
  /** Where each key was set: `a.b: 1` and `a: {b: 2}` are the same key, which YAML itself does not see. */
  const setAt = new Map<string, string>();
  const check = new Configuration();
  const walk = (node: Node | null, prefix: string): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const keyNode = pair.key as Node | null;
        const key = isScalar(keyNode) ? String(keyNode.value) : undefined;
        if (key === undefined || key === '') throw new ConfigError(`${path}${lineOf(keyNode)}: a key must be a plain name, like execution.checkpointing.interval`);
        walk(pair.value as Node | null, prefix === '' ? key : `${prefix}.${key}`);
      }
      return;
    }
    if (prefix === '') {
      if (node === null || (isScalar(node) && node.value === null)) return; // an empty file
      throw new ConfigError(`${path}: expected keys and values (key: value), like execution.checkpointing.interval: 10s`);
    }
    if (isSeq(node)) throw new ConfigError(`${path}${lineOf(node)}: '${prefix}' has a list; every option takes one value`);
    if (!isScalar(node) || node.value === null || node.value === undefined) throw new ConfigError(`${path}${lineOf(node)}: '${prefix}' has no value`);
    const earlier = setAt.get(prefix);
    if (earlier !== undefined) {
      throw new ConfigError(`${path}${lineOf(node)}: '${prefix}' is set twice (also at line ${earlier.slice(1)}; a dotted key and nested keys name the same option): keep one`);
    }
    setAt.set(prefix, lineOf(node) || ':?');
    const raw = node.value;
    const value: ConfigValue = typeof raw === 'number' || typeof raw === 'boolean' ? raw : String(raw);
    try {
      check.set(prefix, value);
    } catch (e) {
      throw new ConfigError(`${path}${lineOf(node)}: ${(e as Error).message}`);
    }
    entries.push([prefix, value]);
  };
  walk(doc.contents as Node | null, '');
  return { path, entries };
}

/**
 * The environment variable whose YAML overrides the configuration file's keys, as Flink's
 * container image appends `FLINK_PROPERTIES` to its config.yaml: how a container or a
 * Kubernetes manifest sets a few keys without mounting a file.
 */
export const PROPERTIES_ENV = 'SLUICE_PROPERTIES';

/**
 * The configuration a command starts from: the configuration file's, if there is one, then
 * the keys of `$SLUICE_PROPERTIES` over them (then -D options override both).
 */
export function baseConfiguration(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Configuration {
  const path = configFilePath(env, cwd);
  const entries = path === undefined ? [] : [...readConfigFile(path).entries];
  const properties = env[PROPERTIES_ENV];
  if (properties !== undefined && properties.trim() !== '') entries.push(...parseConfigText(properties, `$${PROPERTIES_ENV} (environment)`).entries);
  return new Configuration(entries);
}
