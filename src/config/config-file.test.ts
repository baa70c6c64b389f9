import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { baseConfiguration, configFilePath, readConfigFile } from './config-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A working directory with conf/config.yaml holding `text`. */
function withConfig(text: string): { cwd: string; path: string } {
  const cwd = mkdtempSync(join(tmpdir(), 'sluice-conf-'));
  dirs.push(cwd);
  mkdirSync(join(cwd, 'conf'));
  const path = join(cwd, 'conf', 'config.yaml');
  writeFileSync(path, text);
  return { cwd, path };
}

describe('the configuration file (conf/config.yaml, as Flink\'s)', () => {
  it('reads nested and dotted keys alike, checked and converted as -D values', () => {
    const { cwd, path } = withConfig(
      ['# a comment', 'parallelism.default: 4', 'execution:', '  checkpointing:', '    interval: 10s', '    mode: at_least_once', 'rest:', '  port: 9091', 'state.backend.type: lmdb', ''].join('\n'),
    );
    expect(configFilePath({}, cwd)).toBe(path);
    expect(readConfigFile(path).entries).toEqual([
      ['parallelism.default', 4],
      ['execution.checkpointing.interval', '10s'],
      ['execution.checkpointing.mode', 'at_least_once'],
      ['rest.port', 9091],
      ['state.backend.type', 'lmdb'],
    ]);
    const c = baseConfiguration({}, cwd);
    expect([c.getNumber('parallelism.default'), c.getNumber('execution.checkpointing.interval'), c.getString('execution.checkpointing.mode'), c.getNumber('rest.port')]).toEqual([
      4, 10_000, 'AT_LEAST_ONCE', 9091,
    ]);
  });

  it('SLUICE_CONF_DIR names the directory; none at the default place is no file; an empty file is no options', () => {
    const { cwd } = withConfig('rest.port: 9092\n');
    const other = mkdtempSync(join(tmpdir(), 'sluice-conf-'));
    dirs.push(other);
    writeFileSync(join(other, 'config.yaml'), 'rest.port: 9093\n');
    expect(baseConfiguration({ SLUICE_CONF_DIR: other }, cwd).getNumber('rest.port')).toBe(9093);
    expect(() => baseConfiguration({ SLUICE_CONF_DIR: join(other, 'nope') }, cwd)).toThrow(/SLUICE_CONF_DIR is .*nope, but .*nope\/config\.yaml does not exist: create it, or unset SLUICE_CONF_DIR/);
    expect(configFilePath({}, other)).toBeUndefined();
    expect(baseConfiguration({}, other).entries()).toEqual([]);
    expect(baseConfiguration({}, withConfig('# nothing yet\n').cwd).entries()).toEqual([]);
  });

  it('SLUICE_PROPERTIES (as Flink image\'s FLINK_PROPERTIES) sets keys over the file; its errors name the variable', () => {
    const { cwd } = withConfig('rest.port: 9092\nparallelism.default: 3\n');
    const c = baseConfiguration({ SLUICE_PROPERTIES: 'rest.port: 9094\ntaskmanager:\n  numberOfTaskSlots: 4\n' }, cwd);
    expect([c.getNumber('rest.port'), c.getNumber('parallelism.default'), c.getNumber('taskmanager.numberOfTaskSlots')]).toEqual([9094, 3, 4]);
    expect(baseConfiguration({ SLUICE_PROPERTIES: ' \n' }, cwd).getNumber('rest.port')).toBe(9092);
    expect(() => baseConfiguration({ SLUICE_PROPERTIES: 'rest.port: [1]\n' }, cwd)).toThrow(/^\$SLUICE_PROPERTIES \(environment\):1: 'rest\.port' has a list/);
    expect(() => baseConfiguration({ SLUICE_PROPERTIES: 'no.such.key: 1\n' }, cwd)).toThrow(/^\$SLUICE_PROPERTIES \(environment\):1: .*no\.such\.key/);
  });

  it("Flink's legacy flink-conf.yaml without a config.yaml is an error naming the fix (its settings were ignored without a word)", () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sluice-conf-'));
    dirs.push(cwd);
    mkdirSync(join(cwd, 'conf'));
    writeFileSync(join(cwd, 'conf', 'flink-conf.yaml'), 'parallelism.default: 2\n');
    const legacy = join(cwd, 'conf', 'flink-conf.yaml').replace(/[/.]/g, (c) => `\\${c}`);
    expect(() => configFilePath({}, cwd)).toThrow(new RegExp(`^${legacy} is Flink's legacy configuration file, which Sluice does not read \\(nor does Flink 2\\): its settings go in .*conf/config\\.yaml\\. Rename it to config\\.yaml: its flat 'key: value' lines are valid there$`));
    expect(() => configFilePath({ SLUICE_CONF_DIR: join(cwd, 'conf') }, tmpdir())).toThrow(/flink-conf\.yaml is Flink's legacy configuration file/);
    // With a config.yaml beside it, config.yaml is read (as Flink 1.19+ does).
    writeFileSync(join(cwd, 'conf', 'config.yaml'), 'parallelism.default: 3\n');
    expect(baseConfiguration({}, cwd).getNumber('parallelism.default')).toBe(3);
  });

  it('errors name the file, the line, the key and the fix', () => {
    const bad = (text: string): string => {
      const { path } = withConfig(text);
      try {
        readConfigFile(path);
      } catch (e) {
        return (e as Error).message.replace(path, 'FILE');
      }
      return 'no error';
    };
    expect(bad('parallelism.default: 2\nexecution.checkpointing.intervall: 10s\n')).toMatch(
      /^FILE:2: unknown configuration key 'execution\.checkpointing\.intervall'; did you mean 'execution\.checkpointing\.interval'\?/,
    );
    expect(bad('rest:\n  port: 70000\n')).toMatch(/^FILE:2: invalid value 70000 for 'rest\.port': must be <= 65535/);
    expect(bad('rest.port: [1, 2]\n')).toMatch(/^FILE:1: 'rest\.port' has a list; every option takes one value/);
    expect(bad('rest.port:\n')).toMatch(/^FILE:1: 'rest\.port' has no value/);
    expect(bad('rest.port: 1\nrest.port: 2\n')).toMatch(/^FILE is not valid YAML: .*[Mm]ap keys must be unique/);
    // The same option as a dotted key and as nested keys: YAML sees two keys, Sluice one.
    expect(bad('rest.port: 8081\nparallelism.default: 2\nrest:\n  port: 9091\n')).toBe(
      "FILE:4: 'rest.port' is set twice (also at line 1; a dotted key and nested keys name the same option): keep one",
    );
    expect(bad('rest:\n  port: 8081\nrest.port: 9091\n')).toMatch(/^FILE:3: 'rest\.port' is set twice \(also at line 2;/);
    expect(bad('- a\n- b\n')).toMatch(/^FILE: expected keys and values \(key: value\)/);
    // The yaml library's message said to call YAML.parseAllDocuments().
    expect(bad('parallelism.default: 2\n---\nrest.port: 8082\n')).toBe(
      "FILE:2: a second YAML document starts here ('---'); the configuration is one document: remove the '---' line and keep one set of keys",
    );
    expect(bad('a: [\n')).toMatch(/^FILE is not valid YAML/);
  });
});
