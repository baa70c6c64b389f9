import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Configuration } from '../src/config/configuration.js';
import { checkpointStorageConformance, type StorageFixture } from '../src/runtime/storage/checkpoint-storage.conformance.js';
import type { CheckpointRef } from '../src/runtime/storage/checkpoint-storage.js';
import { createCheckpointStorage } from '../src/runtime/storage/checkpoint-storage-factory.js';
import { S3Client, s3SettingsFrom, type S3Settings } from '../src/runtime/storage/s3-client.js';
import { S3CheckpointStorage, createS3SavepointLocation, disposeS3Savepoint, locateS3Snapshot, readS3StateHandle } from '../src/runtime/storage/s3-checkpoint-storage.js';
import { disposeSavepoint } from '../src/runtime/storage/savepoint-directory.js';
import type { FileStateHandle } from '../src/runtime/storage/snapshot-format.js';
import { seededBytes, TEST_JOB_ID, writeSampleSnapshot } from '../src/runtime/storage/snapshot-test-data.js';
import { startS3Server, type S3TestServer } from './services/s3-server.js';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeKeyedState } from '../src/runtime/checkpoint/state-persistence.js';
import type { KeyedStateSnapshot } from '../src/runtime/state/keyed-state-snapshot.js';
import { packKeyGroups, packStateNames } from '../src/runtime/state/packed-key-groups.js';
import { SpillFileWriter } from '../src/runtime/state/spill-file-writer.js';

let server: S3TestServer | undefined;
let starting: Promise<S3TestServer> | undefined;
const s3 = (): Promise<S3TestServer> => (starting ??= startS3Server(['sluice', 'other']).then((s) => (server = s)));
afterAll(async () => {
  await server?.close();
});

const settingsOf = (srv: S3TestServer, more: Partial<S3Settings> = {}): S3Settings => ({ ...s3SettingsFrom(new Configuration(Object.entries(srv.config)), {}), ...more });
let runs = 0;

function flip(bytes: Uint8Array, offset: number): void {
  const i = offset < 0 ? bytes.length + offset : offset;
  bytes[i] = bytes[i]! ^ 0xff;
}

checkpointStorageConformance({
  name: 's3 (s3rver on loopback)',
  storesStateInFiles: true,
  async setUp({ jobId, dataInlineThresholdBytes }): Promise<StorageFixture> {
    const srv = await s3();
    // A small part size, so the conformance suite's larger chunks (32-100 KiB) go up as multipart uploads.
    const client = new S3Client(settingsOf(srv, { partSizeBytes: 40 * 1024 }));
    const dir = `s3://sluice/conformance-${++runs}`;
    const open = (): Promise<S3CheckpointStorage> => S3CheckpointStorage.open({ checkpointsDir: dir, jobId, client, dataInlineThresholdBytes });
    const metadataKey = (id: number): string => `conformance-${runs}/${jobId}/chk-${id}/_metadata`;
    const stateKey = (h: FileStateHandle, c: CheckpointRef): string => `${locateS3Snapshot(c.pointer).dirKey}/${h.path}`;
    const damage = async (key: string, offset: number): Promise<void> => {
      const bytes = (await client.get('sluice', key))!;
      flip(bytes, offset);
      await client.put('sluice', key, bytes);
    };
    const truncate = async (key: string, length: number): Promise<void> => client.put('sluice', key, (await client.get('sluice', key))!.subarray(0, length));
    return {
      storage: await open(),
      reopen: open,
      metadataFile: (id) => `s3://sluice/${metadataKey(id)}`,
      damageMetadata: (id, offset) => damage(metadataKey(id), offset),
      truncateMetadata: (id, length) => truncate(metadataKey(id), length),
      async damageStateFile(h, c, offset) {
        await damage(stateKey(h, c), offset);
        return `s3://sluice/${stateKey(h, c)}`;
      },
      async truncateStateFile(h, c, length) {
        await truncate(stateKey(h, c), length);
        return `s3://sluice/${stateKey(h, c)}`;
      },
      async tearDown() {},
    };
  },
});

describe('S3 storage specifics', () => {
  let srv: S3TestServer;
  beforeAll(async () => {
    srv = await s3();
  });

  it('uploads large files in parts (multipart upload) and reads them back whole', async () => {
    const client = new S3Client(settingsOf(srv, { partSizeBytes: 64 * 1024 }));
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    try {
      const bytes = seededBytes(200 * 1024 + 7, 3);
      await client.put('sluice', 'multipart/big', bytes);
      const urls = fetchSpy.mock.calls.map((c) => String(c[0] instanceof Request ? c[0].url : c[0]));
      expect(urls.filter((u) => /[?&]uploads(=|&|$)/.test(u))).toHaveLength(1);
      expect(urls.filter((u) => /partNumber=\d+&uploadId=/.test(u))).toHaveLength(4);
      expect(await client.get('sluice', 'multipart/big')).toEqual(bytes);
      expect(await client.head('sluice', 'multipart/big')).toBe(bytes.length);
    } finally {
      fetchSpy.mockRestore();
    }
  });

  it('uploads a spilled full snapshot in parts as its file is read (never whole in memory): it reads back as packKeyGroups writes it, and the spill file is gone', async () => {
    const client = new S3Client(settingsOf(srv, { partSizeBytes: 64 * 1024 }));
    const spillDir = mkdtempSync(join(tmpdir(), 'sluice-s3-spill-'));
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    try {
      const storage = await S3CheckpointStorage.open({ checkpointsDir: `s3://sluice/spilled-${++runs}`, jobId: TEST_JOB_ID, client, dataInlineThresholdBytes: 1024 });
      const savepoint = await createS3SavepointLocation('s3://other/spilled-savepoints', TEST_JOB_ID, client, { dataInlineThresholdBytes: 1024 });
      for (const [i, groupBytes] of [200 * 1024, 20 * 1024, 10].entries()) {
        const range = { startKeyGroup: 0, endKeyGroup: 7 };
        const groups = new Map([0, 3, 4, 7].map((kg) => [kg, seededBytes(groupBytes / 4, kg + 1)] as const));
        const snapshot: KeyedStateSnapshot = { formatVersion: 1, maxParallelism: 128, keyGroupRange: range, states: [{ name: 's', kind: 'value', namespaced: false, groups }], timers: new Map() };
        const expected = packKeyGroups(snapshot);
        for (const [where, location] of [
          ['checkpoint', await storage.createCheckpointLocation(i + 1)],
          ['savepoint', { checkpointId: i + 1, writeStateFile: savepoint.writeStateFile, writeStateFileFrom: savepoint.writeStateFileFrom }],
        ] as const) {
          const writer = await SpillFileWriter.create(spillDir, range, 128);
          for (let kg = 0; kg <= 7; kg++) await writer.append(kg, packStateNames(snapshot.states), [groups.get(kg)], undefined);
          const spilled = await writer.finish();
          const bytesRead = vi.spyOn(spilled, 'bytes');
          fetchSpy.mockClear();
          const handle = await writeKeyedState(spilled, location);
          expect(handle.keyGroupOffsetsBytes, `${groupBytes} bytes, ${where}`).toEqual(expected.offsets);
          const ref = where === 'checkpoint' ? { pointer: storage.checkpointDir(i + 1), checkpointId: i + 1 } : { pointer: savepoint.dir, checkpointId: i + 1 };
          expect(Buffer.compare(await readS3StateHandle(client, handle.data, ref), expected.data), `${groupBytes} bytes, ${where}`).toBe(0);
          const urls = fetchSpy.mock.calls.map((c) => String(c[0] instanceof Request ? c[0].url : c[0]));
          const parts = urls.filter((u) => /partNumber=\d+&uploadId=/.test(u)).length;
          if (groupBytes > 64 * 1024) expect(parts, 'one part per 64 KiB of the file').toBe(Math.ceil((24 + expected.data.length) / (64 * 1024)));
          else expect(parts).toBe(0);
          // Only state inlined into _metadata is read into memory.
          expect(bytesRead).toHaveBeenCalledTimes(handle.data.kind === 'inline' ? 1 : 0);
          expect(readdirSync(spillDir)).toEqual([]);
        }
      }
    } finally {
      fetchSpy.mockRestore();
      rmSync(spillDir, { recursive: true, force: true });
    }
  });

  it('finds the retained checkpoints from its index, without listing', async () => {
    const client = new S3Client(settingsOf(srv));
    const storage = await S3CheckpointStorage.open({ checkpointsDir: 's3://sluice/no-listing', jobId: TEST_JOB_ID, client, dataInlineThresholdBytes: 1024 });
    for (const id of [1, 2, 5]) {
      const location = await storage.createCheckpointLocation(id);
      await storage.finalizeCheckpoint((await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: id })).metadata);
    }
    await storage.discardCheckpoint(2);
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    try {
      const reopened = await S3CheckpointStorage.open({ checkpointsDir: 's3://sluice/no-listing', jobId: TEST_JOB_ID, client, dataInlineThresholdBytes: 1024 });
      expect((await reopened.listRetainedCheckpoints()).map((c) => [c.checkpointId, c.pointer])).toEqual([
        [5, `s3://sluice/no-listing/${TEST_JOB_ID}/chk-5`],
        [1, `s3://sluice/no-listing/${TEST_JOB_ID}/chk-1`],
      ]);
      const urls = fetchSpy.mock.calls.map((c) => String(c[0] instanceof Request ? c[0].url : c[0]));
      expect(urls.filter((u) => u.includes('list-type=2'))).toEqual([]);
    } finally {
      fetchSpy.mockRestore();
    }
    // A checkpoint completed just before a crash, before the index named it, is found too.
    const crashed = await S3CheckpointStorage.open({ checkpointsDir: 's3://sluice/no-listing', jobId: TEST_JOB_ID, client, dataInlineThresholdBytes: 1024 });
    const location = await crashed.createCheckpointLocation(6);
    const { metadata } = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 6 });
    const { encodeMetadata } = await import('../src/runtime/storage/metadata-codec.js');
    await client.put('sluice', `no-listing/${TEST_JOB_ID}/chk-6/_metadata`, encodeMetadata(metadata));
    expect((await crashed.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([6, 5, 1]);
    // A damaged index is rebuilt from a listing.
    await client.put('sluice', `no-listing/${TEST_JOB_ID}/_checkpoints`, new TextEncoder().encode('{not json'));
    expect((await crashed.listRetainedCheckpoints()).map((c) => c.checkpointId)).toEqual([6, 5, 1]);
  });

  it('the factory picks S3 storage for an s3:// checkpoint directory, with the s3.* options', async () => {
    const storage = await createCheckpointStorage({ jobId: TEST_JOB_ID, checkpointsDir: 's3://sluice/factory', config: new Configuration(Object.entries(srv.config)) });
    expect(storage).toBeInstanceOf(S3CheckpointStorage);
    expect(storage.kind).toBe('filesystem');
  });

  it('writes a savepoint to s3://, reads it, disposes of it; refuses what is not a savepoint', async () => {
    const client = new S3Client(settingsOf(srv));
    const location = await createS3SavepointLocation('s3://other/savepoints', TEST_JOB_ID, client, { dataInlineThresholdBytes: 1024 });
    expect(location.dir).toMatch(/^s3:\/\/other\/savepoints\/savepoint-012345-[0-9a-f]{12}$/);
    const sample = await writeSampleSnapshot(location, { jobId: TEST_JOB_ID, checkpointId: 4, type: 'savepoint' });
    const done = await location.finalize(sample.metadata);
    for (const w of sample.written) expect(await readS3StateHandle(client, w.handle, done)).toEqual(w.bytes);
    await expect(disposeS3Savepoint('s3://other/savepoints', client)).rejects.toThrow(/refusing to dispose s3:\/\/other\/savepoints: it holds savepoint-.*, which Sluice did not write/);
    await expect(disposeS3Savepoint('s3://other/nothing-here', client)).rejects.toThrow(/refusing to dispose s3:\/\/other\/nothing-here: it does not exist/);
    await disposeSavepoint(`${done.pointer}/_metadata`, new Configuration(Object.entries(srv.config)));
    expect((await client.list('other', 'savepoints/')).keys).toEqual([]);
  });

  it('clear errors: missing bucket, unreachable endpoint, missing credentials', async () => {
    const client = new S3Client(settingsOf(srv, { retryLimit: 0 }));
    await expect(S3CheckpointStorage.open({ checkpointsDir: 's3://no-such-bucket/chk', jobId: TEST_JOB_ID, client })).rejects.toThrow(
      /checkpoint directory s3:\/\/no-such-bucket\/chk: the bucket no-such-bucket does not exist .*; create it, or point execution.checkpointing.dir at an existing bucket/,
    );
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const dead = new S3Client(settingsOf(srv, { endpoint: `http://127.0.0.1:${closedPort}`, retryLimit: 1, retryIntervalMs: 1 }));
    await expect(S3CheckpointStorage.open({ checkpointsDir: 's3://sluice/chk', jobId: TEST_JOB_ID, client: dead })).rejects.toThrow(
      /cannot reach S3 \(PUT s3:\/\/sluice\/chk\/.*ECONNREFUSED.*gave up after 2 attempts\); check s3.endpoint/,
    );
    expect(() => s3SettingsFrom(new Configuration(), {})).toThrow(/no S3 credentials: set s3.access-key and s3.secret-key \(or the AWS_ACCESS_KEY_ID/);
    const fromEnv = s3SettingsFrom(undefined, { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_REGION: 'eu-west-1' });
    expect(fromEnv).toMatchObject({ endpoint: 'https://s3.eu-west-1.amazonaws.com', region: 'eu-west-1', pathStyleAccess: false, partSizeBytes: 5 * 1024 * 1024 });
  });
});

describe('S3 client retries', () => {
  let fake: Server;
  let endpoint = '';
  const script: number[] = [];
  const seen: string[] = [];
  beforeAll(async () => {
    fake = createServer((req: IncomingMessage, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        const status = script.shift() ?? 200;
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(status === 200 ? '' : `<Error><Code>${status === 503 ? 'SlowDown' : 'AccessDenied'}</Code><Message>scripted</Message></Error>`);
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => fake.close(() => r())));

  const settings = (): S3Settings => ({
    endpoint,
    accessKeyId: 'k',
    secretAccessKey: 's',
    region: 'us-east-1',
    pathStyleAccess: true,
    partSizeBytes: 1024,
    retryLimit: 3,
    retryIntervalMs: 100,
  });

  it('retries throttling and 5xx with exponential backoff, then succeeds', async () => {
    const delays: number[] = [];
    const client = new S3Client(settings(), async (ms) => void delays.push(ms));
    script.push(503, 500, 503);
    seen.length = 0;
    await client.put('b', 'k', new Uint8Array([1]));
    expect(seen).toEqual(['PUT /b/k', 'PUT /b/k', 'PUT /b/k', 'PUT /b/k']);
    expect(delays).toHaveLength(3);
    delays.forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(50 * 2 ** i);
      expect(d).toBeLessThanOrEqual(100 * 2 ** i);
    });
  });

  it('gives up after s3.retry.limit retries, and does not retry a 403', async () => {
    const client = new S3Client(settings(), async () => {});
    script.push(503, 503, 503, 503);
    seen.length = 0;
    await expect(client.put('b', 'k', new Uint8Array([1]))).rejects.toThrow(/PUT s3:\/\/b\/k: HTTP 503 SlowDown: scripted; gave up after 4 attempts/);
    expect(seen).toHaveLength(4);
    script.push(403);
    seen.length = 0;
    await expect(client.get('b', 'k')).rejects.toThrow(/HTTP 403 AccessDenied/);
    expect(seen).toHaveLength(1);
  });
});
