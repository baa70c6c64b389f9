/**
 * The commands docs/deployment.md gives for starting processes by hand, run as written (with
 * this machine's addresses): a documented command that Node refuses would strand whoever
 * copies it (the NODE_OPTIONS form exited at once with code 9: "--min-semi-space-size= is not
 * allowed in NODE_OPTIONS").
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterProcesses, SLUICE_BIN, sleep } from './support/cluster-processes.js';

const ROOT = join(import.meta.dirname, '..');
const procs = new ClusterProcesses('sluice-deployment-commands-');
afterAll(() => procs.cleanUp());

/** The ```sh blocks of a markdown file (indented ones too), backslash-continued lines joined. */
function shellBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const re = /^([ \t]*)```sh\n([\s\S]*?)^\1```/gm;
  for (let m = re.exec(markdown); m !== null; m = re.exec(markdown)) {
    const indent = m[1]!.length;
    blocks.push(m[2]!.split('\n').map((l) => l.slice(indent)).join('\n').replace(/\\\n\s*/g, ''));
  }
  return blocks;
}

describe('docs/deployment.md', () => {
  it('the hand-started TaskManager command with the young-generation flags starts and registers, on this Node line', { timeout: 90_000 }, async () => {
    const block = shellBlocks(readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8')).find((b) => b.includes('--min-semi-space-size'));
    expect(block, 'deployment.md gives the command').toBeDefined();
    expect(block).not.toContain('NODE_OPTIONS');
    const jm = await procs.start(['jobmanager', '--rpc-port', '0', '--rest-port', '0'], /connect to (\S+):(\d+); REST API at (http:\/\/\S+)/);
    const rpc = `127.0.0.1:${jm.match[2]}`;
    const restUrl = jm.match[3]!;
    // The documented command with this machine's addresses; node_modules/.bin/sluice is this repository's bin.
    const command = block!.trim().replace('10.0.0.1:6123', rpc).replace('taskmanager.host=10.0.0.2', 'taskmanager.host=127.0.0.1').replace('node_modules/.bin/sluice', SLUICE_BIN);
    const tm = spawn('bash', ['-c', command], {
      detached: true, // its own process group: the kill below reaches node, whatever bash does
      cwd: ROOT,
      env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    tm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    tm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    let exit: number | null | undefined;
    tm.once('exit', (code) => (exit = code));
    try {
      let registered: { slotsNumber: number }[] = [];
      while (registered.length === 0 && exit === undefined) {
        await sleep(200);
        registered = ((await (await fetch(`${restUrl}/taskmanagers`)).json()) as { taskmanagers: { slotsNumber: number }[] }).taskmanagers;
      }
      expect(exit, `the TaskManager exited:\n${out}`).toBeUndefined();
      expect(registered.map((t) => t.slotsNumber)).toEqual([2]);
    } finally {
      process.kill(-tm.pid!, 'SIGKILL');
    }
  });
});
