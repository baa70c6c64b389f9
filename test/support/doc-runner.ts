/**
 * Runs a Markdown document's code blocks, so a guide is tested as a reader follows it
 * (test/kafka-getting-started.test.ts runs docs/getting-started.md). What a block is comes
 * from its info string (the words after the opening fence):
 *
 * - ```sh (or bash, shell): commands, run in order in ONE bash session (`set -euo pipefail`),
 *   so the working directory, variables, `&` and `$!` carry over from block to block;
 * - ```ts file=src/job.ts (any language, `file=<path>`): a file the reader creates; written,
 *   at that point of the session, relative to the session's working directory then;
 * - ```sh prerequisite (any language, the word `prerequisite`): something to do before, that
 *   cannot run here (a container engine, a download); skipped, and listed so a test can check
 *   where such blocks are;
 * - ```text (or output): what a command prints, for the reader; not run.
 *
 * Any other block (no info string, ```ts without a file, ```sql, an unknown word) is an error:
 * every block of an executed document either runs or says why not.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type DocBlockKind = 'shell' | 'file' | 'prerequisite' | 'output';

export interface DocBlock {
  readonly kind: DocBlockKind;
  /** The info string as written. */
  readonly info: string;
  /** Its first word (`sh`, `ts`, ...). */
  readonly language: string;
  /** For `file` blocks: the path from `file=<path>`. */
  readonly file?: string;
  /** The content, each line ending with a newline, the fence's indentation removed. */
  readonly code: string;
  /** The 1-based line of the opening fence. */
  readonly line: number;
  /** The 1-based line of the content's first line. */
  readonly contentLine: number;
  /** The headings the block is under, outermost first (`['Getting started', 'Before you start']`). */
  readonly headings: readonly string[];
}

export class DocError extends Error {
  override readonly name = 'DocError';
}

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell']);
const OUTPUT_LANGUAGES = new Set(['text', 'output']);

/** The heading of level `level` (2 for `##`) that a block is under, or undefined. */
export function headingAt(block: DocBlock, level: number): string | undefined {
  return block.headings[level - 1];
}

function classify(info: string, line: number, where: string): Pick<DocBlock, 'kind' | 'language' | 'file'> {
  const words = info.trim().split(/\s+/).filter((w) => w !== '');
  const language = words[0] ?? '';
  let file: string | undefined;
  let prerequisite = false;
  for (const w of words.slice(1)) {
    const m = /^file=(?:"([^"]+)"|'([^']+)'|(\S+))$/.exec(w);
    if (m !== null) file = m[1] ?? m[2] ?? m[3];
    else if (w === 'prerequisite') prerequisite = true;
    else throw new DocError(`${where}:${line}: unknown word '${w}' in the info string '${info}' (known: file=<path>, prerequisite)`);
  }
  const what = `${where}:${line}: the block \`\`\`${info}`;
  if (language === '') throw new DocError(`${what} has no info string: say what it is (sh, text, <language> file=<path>, sh prerequisite)`);
  if (prerequisite && file !== undefined) throw new DocError(`${what} is both a file and a prerequisite`);
  if (prerequisite) return { kind: 'prerequisite', language };
  if (file !== undefined) {
    if (file.startsWith('/') || file.split('/').includes('..')) throw new DocError(`${what}: file=${file} must be a relative path inside the working directory`);
    return { kind: 'file', language, file };
  }
  if (SHELL_LANGUAGES.has(language)) return { kind: 'shell', language };
  if (OUTPUT_LANGUAGES.has(language)) return { kind: 'output', language };
  throw new DocError(
    `${what} is neither run (sh), written (${language} file=<path>), skipped (${language} prerequisite) nor output (text): a reader could not follow it as it is`,
  );
}

/** The fenced code blocks of a Markdown document, each classified; `where` names it in errors. */
export function parseDoc(markdown: string, where = 'document'): DocBlock[] {
  const lines = markdown.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const blocks: DocBlock[] = [];
  const headings: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const heading = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(l);
    if (heading !== null) {
      const level = heading[1]!.length;
      headings.length = level - 1;
      for (let k = 0; k < level - 1; k++) headings[k] ??= '';
      headings[level - 1] = heading[2]!;
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(l);
    if (fence === null) continue;
    const [, indent, marks, rest] = fence as unknown as [string, string, string, string];
    if (marks[0] === '`' && rest.includes('`')) continue; // an inline code span, not a fence
    const open = i + 1;
    const content: string[] = [];
    let closed = false;
    for (i++; i < lines.length; i++) {
      const c = lines[i]!;
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(c);
      if (close !== null && close[1]![0] === marks[0] && close[1]!.length >= marks.length) {
        closed = true;
        break;
      }
      // Remove the opening fence's indentation (as much of it as the line has).
      let k = 0;
      while (k < indent.length && c[k] === ' ') k++;
      content.push(c.slice(k));
    }
    if (!closed) throw new DocError(`${where}:${open}: the code block opened here is never closed`);
    const info = rest.trim();
    blocks.push({ ...classify(info, open, where), info, code: content.map((c) => `${c}\n`).join(''), line: open, contentLine: open + 1, headings: [...headings] });
  }
  return blocks;
}

/** A command of a shell block replaced by another (as the test must run it): `from` occurs once in all shell blocks. */
export interface Substitution {
  readonly from: string;
  readonly to: string;
}

export interface DocScript {
  /** The bash script: every shell block and file block in order. */
  readonly text: string;
  /** Maps a line of the script back to the document line it came from (undefined for the runner's own lines). */
  documentLine(scriptLine: number): number | undefined;
}

/** Quotes for bash. */
function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The bash script that runs `blocks` (shell blocks run, file blocks written with a quoted here
 * document, prerequisite and output blocks left out) after `set -euo pipefail`. Before each
 * block it records the block's document line in `$DOC_TRACE` (with the time) and writes a
 * `=== <where>:<line>` header to the output; a failing command reports its document line.
 */
export function shellScript(blocks: readonly DocBlock[], where: string, substitutions: readonly Substitution[] = []): DocScript {
  const used = substitutions.map(() => 0);
  const out: string[] = [];
  const map: (number | undefined)[] = [undefined]; // index: script line (1-based)
  const emit = (text: string, docLine?: number): void => {
    for (const l of text.split('\n')) {
      out.push(l);
      map.push(docLine);
    }
  };
  emit('set -euo pipefail');
  emit(`trap 'echo "doc-runner: exit status $? at script line $LINENO: $BASH_COMMAND" >&2; echo "failed $LINENO" >> "$DOC_TRACE"' ERR`);
  blocks.forEach((b, n) => {
    if (b.kind === 'output' || b.kind === 'prerequisite') return;
    emit(`# block ${n + 1}: ${where}:${b.line} (${b.info})`);
    emit(`printf 'block %s %s\\n' ${b.line} "$EPOCHREALTIME" >> "$DOC_TRACE"; printf '\\n=== %s\\n' ${quote(`${where}:${b.line} ${b.info}`)}`);
    const lines = b.code.replace(/\n$/, '').split('\n');
    if (b.kind === 'file') {
      const eof = `DOC_RUNNER_EOF_${n + 1}`;
      if (lines.includes(eof)) throw new DocError(`${where}:${b.line}: the file holds the line ${eof}`);
      emit(`mkdir -p "$(dirname ${quote(b.file!)})"`);
      emit(`cat > ${quote(b.file!)} <<'${eof}'`);
      lines.forEach((l, k) => emit(l, b.contentLine + k));
      emit(eof);
      return;
    }
    lines.forEach((l, k) => {
      let text = l;
      substitutions.forEach((s, j) => {
        if (text.includes(s.from)) {
          used[j]! += text.split(s.from).length - 1;
          text = text.split(s.from).join(s.to);
        }
      });
      emit(text, b.contentLine + k);
    });
  });
  substitutions.forEach((s, j) => {
    if (used[j] !== 1) throw new DocError(`${where}: the substitution of '${s.from}' applies to ${used[j]} places of the shell blocks; it must apply to exactly one`);
  });
  return { text: `${out.join('\n')}\n`, documentLine: (scriptLine) => map[scriptLine] };
}

export interface DocRun {
  /** bash's exit code, or null when it was killed (timeout). */
  readonly code: number | null;
  readonly timedOut: boolean;
  /** stdout and stderr of the session, as they came. */
  readonly output: string;
  /** Document lines of the blocks that started, in order, with their start time (epoch ms). */
  readonly started: readonly { readonly line: number; readonly atMs: number }[];
  /** The document line of the command that failed, if one did (set -e). */
  readonly failedLine: number | undefined;
  /** Why the session was ended early (abortWhen's answer), if it was. */
  readonly aborted: string | undefined;
  readonly durationMs: number;
  /** Whether processes the session started in the background were still running after it ended (they were killed). */
  readonly leftBehind: boolean;
}

export interface RunOptions {
  /** The session's working directory at the start. */
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  /** A directory for the script, its output and the trace. */
  readonly workDir: string;
  /** How long background processes may take to end after the session did. */
  readonly leftBehindGraceMs?: number;
  /**
   * Asked every second while the session runs: a reason to give up now (a background job that
   * failed, which a waiting loop of the document would wait for in vain), or undefined.
   */
  readonly abortWhen?: () => string | undefined;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs the script with bash in a process group of its own; kills the group on timeout and whatever is left in it after. */
export async function runScript(script: DocScript, o: RunOptions): Promise<DocRun> {
  const scriptFile = join(o.workDir, 'doc-script.sh');
  const outputFile = join(o.workDir, 'doc-output.log');
  const trace = join(o.workDir, 'doc-trace');
  writeFileSync(scriptFile, script.text);
  writeFileSync(trace, '');
  // A file, not a pipe: a background process that keeps the session's output open cannot hold up its end.
  const fd = openSync(outputFile, 'w');
  const t0 = Date.now();
  const child = spawn('bash', ['--noprofile', '--norc', scriptFile], { cwd: o.cwd, env: { ...o.env, DOC_TRACE: trace }, stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  let timedOut = false;
  let aborted: string | undefined;
  const killGroup = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, o.timeoutMs);
  const watch =
    o.abortWhen === undefined
      ? undefined
      : setInterval(() => {
          aborted ??= o.abortWhen!();
          if (aborted !== undefined) killGroup();
        }, 1000);
  const code = await new Promise<number | null>((resolve) => {
    child.on('exit', (c) => resolve(c));
    child.on('error', () => resolve(null));
  });
  clearTimeout(timer);
  clearInterval(watch);
  const durationMs = Date.now() - t0;
  let leftBehind = false;
  const grace = Date.now() + (o.leftBehindGraceMs ?? 10_000);
  while (groupAlive(child.pid!)) {
    if (Date.now() > grace) {
      leftBehind = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const started: { line: number; atMs: number }[] = [];
  let failedLine: number | undefined;
  for (const l of readFileSync(trace, 'utf8').split('\n')) {
    const b = /^block (\d+) ([\d.]+)$/.exec(l);
    if (b !== null) started.push({ line: Number(b[1]), atMs: Math.round(Number(b[2]) * 1000) });
    const f = /^failed (\d+)$/.exec(l);
    if (f !== null) failedLine ??= script.documentLine(Number(f[1]));
  }
  return { code, timedOut, aborted, output: readFileSync(outputFile, 'utf8'), started, failedLine, durationMs, leftBehind };
}
