import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DocError, headingAt, parseDoc, runScript, shellScript } from './support/doc-runner.js';

/** The Markdown parsing and the bash session of test/support/doc-runner.ts (which docs/getting-started.md runs on). */

const doc = [
  '# Guide', //                                   1
  '', //                                          2
  '## Before you start', //                       3
  '', //                                          4
  '```sh prerequisite', //                        5
  'docker run -d postgres', //                    6
  '```', //                                       7
  '', //                                          8
  '## Steps', //                                  9
  '', //                                         10
  '```sh', //                                    11
  'mkdir -p project && cd project', //           12
  'X=hello', //                                  13
  '```', //                                      14
  '', //                                         15
  '1. A file, in a list item:', //               16
  '', //                                         17
  '   ```ts file=src/a.ts', //                   18
  '   export const a = 1;', //                   19
  '     // indented more', //                    20
  '   ```', //                                   21
  '', //                                         22
  '### Output', //                               23
  '', //                                         24
  '~~~text', //                                  25
  '```sh', //                                    26
  'not a fence inside a tilde block', //         27
  '~~~', //                                      28
  '', //                                         29
  '````md file=notes.md', //                     30
  '```', //                                      31
  'a shorter fence does not close it', //        32
  '````', //                                     33
  '', //                                         34
  'Some `inline` text and ``` not a fence ``` here.', // 35
  '', //                                         36
  '```bash', //                                  37
  'echo "$X" > out.txt; pwd >> out.txt', //      38
  '```', //                                      39
].join('\n');

describe('parseDoc', () => {
  it('classifies every block by its info string, with its line, headings and content', () => {
    const blocks = parseDoc(doc, 'guide.md');
    expect(blocks.map((b) => [b.kind, b.language, b.line, b.contentLine, headingAt(b, 2)])).toEqual([
      ['prerequisite', 'sh', 5, 6, 'Before you start'],
      ['shell', 'sh', 11, 12, 'Steps'],
      ['file', 'ts', 18, 19, 'Steps'],
      ['output', 'text', 25, 26, 'Steps'],
      ['file', 'md', 30, 31, 'Steps'],
      ['shell', 'bash', 37, 38, 'Steps'],
    ]);
    expect(blocks[2]!.file).toBe('src/a.ts');
    // The fence's indentation is removed; deeper indentation stays.
    expect(blocks[2]!.code).toBe('export const a = 1;\n  // indented more\n');
    expect(blocks[3]!.headings).toEqual(['Guide', 'Steps', 'Output']);
    expect(blocks[3]!.code).toBe('```sh\nnot a fence inside a tilde block\n');
    expect(blocks[4]!.code).toBe('```\na shorter fence does not close it\n');
    expect(blocks[5]!.code).toBe('echo "$X" > out.txt; pwd >> out.txt\n');
  });

  it.each([
    ['```\nls\n```\n', /guide\.md:1: the block ``` has no info string/],
    ['```ts\nconst a = 1;\n```\n', /guide\.md:1: the block ```ts is neither run \(sh\), written \(ts file=<path>\), skipped \(ts prerequisite\) nor output \(text\)/],
    ['```sql\nSELECT 1;\n```\n', /is neither run/],
    ['```sh prerequisit\nls\n```\n', /unknown word 'prerequisit' in the info string 'sh prerequisit'/],
    ['```ts file=/etc/passwd\nx\n```\n', /must be a relative path/],
    ['```ts file=../x.ts\nx\n```\n', /must be a relative path/],
    ['text\n\n```sh\nls\n', /guide\.md:3: the code block opened here is never closed/],
  ])('refuses %j', (markdown, error) => {
    expect(() => parseDoc(markdown, 'guide.md')).toThrow(error);
    expect(() => parseDoc(markdown, 'guide.md')).toThrow(DocError);
  });
});

describe('shellScript and runScript', () => {
  const work = mkdtempSync(join(tmpdir(), 'sluice-doc-runner-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('substitutes a command that occurs once, and refuses one that occurs never or twice', () => {
    const blocks = parseDoc(doc, 'guide.md');
    expect(shellScript(blocks, 'guide.md', [{ from: 'X=hello', to: 'X=bye' }]).text).toContain('\nX=bye\n');
    expect(() => shellScript(blocks, 'guide.md', [{ from: 'npx sluice init', to: 'x' }])).toThrow(/'npx sluice init' applies to 0 places/);
    expect(() => shellScript(blocks, 'guide.md', [{ from: 'out.txt', to: 'x' }])).toThrow(/'out.txt' applies to 2 places/);
  });

  it('runs the blocks in one bash session: the directory and variables carry over, files are written where the session is, prerequisites and output are skipped', async () => {
    const dir = mkdtempSync(join(work, 'run-'));
    const run = await runScript(shellScript(parseDoc(doc, 'guide.md'), 'guide.md'), { cwd: dir, env: process.env, timeoutMs: 30_000, workDir: work });
    expect(run.code, run.output).toBe(0);
    expect(run.failedLine).toBeUndefined();
    expect(run.started.map((s) => s.line)).toEqual([11, 18, 30, 37]);
    expect(readFileSync(join(dir, 'project', 'notes.md'), 'utf8')).toBe('```\na shorter fence does not close it\n');
    expect(readFileSync(join(dir, 'project', 'src', 'a.ts'), 'utf8')).toBe('export const a = 1;\n  // indented more\n');
    expect(readFileSync(join(dir, 'project', 'out.txt'), 'utf8')).toBe(`hello\n${join(dir, 'project')}\n`);
    expect(run.output).toContain('=== guide.md:37 bash');
    expect(existsSync(join(dir, 'project', 'docker'))).toBe(false);
  });

  it('stops at the first failing command (set -euo pipefail) and names its line in the document', async () => {
    const failing = ['## Steps', '', '```sh', 'A=1', 'true | cat', 'ls /no-such-dir | cat', 'echo never', '```'].join('\n');
    const run = await runScript(shellScript(parseDoc(failing, 'guide.md'), 'guide.md'), { cwd: work, env: process.env, timeoutMs: 30_000, workDir: work });
    expect(run.code).not.toBe(0);
    expect(run.failedLine).toBe(6);
    expect(run.output).not.toContain('never');
  });

  it('kills the session at the timeout or when told to, and what it left running in the background', async () => {
    const slow = ['```sh', 'sleep 60 &', 'sleep 60', '```'].join('\n');
    const run = await runScript(shellScript(parseDoc(slow, 'guide.md'), 'guide.md'), { cwd: work, env: process.env, timeoutMs: 1_000, workDir: work });
    expect(run.timedOut).toBe(true);
    expect(run.code).toBeNull();
    const watched = await runScript(shellScript(parseDoc(slow, 'guide.md'), 'guide.md'), { cwd: work, env: process.env, timeoutMs: 30_000, workDir: work, abortWhen: () => 'the job failed' });
    expect(watched.aborted).toBe('the job failed');
    expect(watched.timedOut).toBe(false);
    expect(watched.code).toBeNull();
    const left = ['```sh', 'sleep 60 &', '```'].join('\n');
    const leaving = await runScript(shellScript(parseDoc(left, 'guide.md'), 'guide.md'), { cwd: work, env: process.env, timeoutMs: 30_000, workDir: work, leftBehindGraceMs: 500 });
    expect(leaving.code).toBe(0);
    expect(leaving.leftBehind).toBe(true);
  });
});
