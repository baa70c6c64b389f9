import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileDurably } from './durable-file.js';
import { decode, encode, encodeHeader } from './checksummed-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-durable-'));
  dirs.push(d);
  return d;
};

describe('writeFileDurably', () => {
  it('writes chunks one after another, empty and large ones included, and leaves no temp file', async () => {
    const dir = tempDir();
    const chunks = [Uint8Array.of(1, 2, 3), new Uint8Array(0), new Uint8Array(3 * 1024 * 1024).fill(7), Uint8Array.of(9)];
    await writeFileDurably(join(dir, 'f'), chunks, '0123456789abcdef');
    expect(Buffer.compare(readFileSync(join(dir, 'f')), Buffer.concat(chunks))).toBe(0);
    expect(readdirSync(dir)).toEqual(['f']);
  });

  it('a header written beside its payload reads back as the file encode() writes', async () => {
    const dir = tempDir();
    const payload = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 13) & 0xff);
    await writeFileDurably(join(dir, 'a'), [encodeHeader(payload, 'state'), payload], '0123456789abcdef');
    const bytes = readFileSync(join(dir, 'a'));
    expect(Buffer.compare(bytes, Buffer.from(encode(payload, 'state')))).toBe(0);
    expect(Buffer.compare(Buffer.from(decode(bytes, { file: 'a', checkpointId: 1 }).payload), Buffer.from(payload))).toBe(0);
  });
});
