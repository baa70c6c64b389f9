import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { moveFileDurably, writeFileDurably } from './durable-file.js';
import { decode, encode, encodeHeader, encodeHeaderOf } from './checksummed-file.js';
import { crc32c } from './crc32c.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = (parent = tmpdir()): string => {
  const d = mkdtempSync(join(parent, 'sluice-durable-'));
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

describe('moveFileDurably', () => {
  const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7) & 0xff);

  /** Moves a file written in `fromDir` and checks that only the target remains, with the bytes. */
  async function moveAndCheck(fromDir: string): Promise<void> {
    const from = join(fromDir, 'spill');
    const dir = tempDir();
    writeFileSync(from, bytes);
    await moveFileDurably(from, join(dir, 'state'), '0123456789abcdef');
    expect(existsSync(from)).toBe(false);
    expect(readdirSync(dir)).toEqual(['state']);
    expect(Buffer.compare(readFileSync(join(dir, 'state')), bytes)).toBe(0);
  }

  it('moves a file into another directory of the filesystem (a rename) and leaves neither it nor a temp file behind', async () => {
    await moveAndCheck(tempDir());
  });

  // /dev/shm is a tmpfs, another filesystem than the temp dir on most Linux machines.
  const otherFs = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(tmpdir()).dev;
  it.runIf(otherFs)('copies across filesystems (EXDEV), then removes the source', async () => {
    await moveAndCheck(tempDir('/dev/shm'));
  });

  it('a missing source fails and leaves nothing at the target', async () => {
    const dir = tempDir();
    await expect(moveFileDurably(join(dir, 'missing'), join(dir, 'state'), '0123456789abcdef')).rejects.toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('encodeHeaderOf', () => {
  it('is the header of encodeHeader, from the payload length and checksum alone', () => {
    const payload = Uint8Array.from({ length: 5000 }, (_, i) => (i * 3) & 0xff);
    expect(Buffer.compare(encodeHeaderOf(payload.length, crc32c(payload), 'state'), encodeHeader(payload, 'state'))).toBe(0);
    expect(() => encodeHeaderOf(-1, 0, 'state')).toThrow(/safe non-negative integer/);
  });
});
