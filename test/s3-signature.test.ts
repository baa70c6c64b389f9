import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Configuration } from '../src/config/configuration.js';
import { checkpointStorageConformance, type StorageFixture } from '../src/runtime/storage/checkpoint-storage.conformance.js';
import type { CheckpointRef } from '../src/runtime/storage/checkpoint-storage.js';
import { S3Client, s3SettingsFrom, type S3Settings } from '../src/runtime/storage/s3-client.js';
import { S3CheckpointStorage, locateS3Snapshot } from '../src/runtime/storage/s3-checkpoint-storage.js';
import type { FileStateHandle } from '../src/runtime/storage/snapshot-format.js';
import { seededBytes, TEST_JOB_ID } from '../src/runtime/storage/snapshot-test-data.js';
import { javaAvailable, startS3Proxy, type S3TestServer } from './services/s3-server.js';

/**
 * The S3 storage against S3Proxy, which (unlike s3rver) checks the AWS Signature V4 of every
 * request and AWS's multipart rules (parts of at least 5 MiB): every call Sluice makes must be
 * signed right. Needs `java` (17+, as the Kafka tests do): without it every test here is
 * reported skipped (registered all the same), which `.ci/run` refuses.
 */

const hasJava = javaAvailable();
let server: S3TestServer | undefined;
let starting: Promise<S3TestServer> | undefined;
const proxy = (): Promise<S3TestServer> => (starting ??= startS3Proxy(['sluice']).then((s) => (server = s)));
afterAll(async () => {
  await server?.close();
}, 30_000);

const settingsOf = (srv: S3TestServer, more: Partial<S3Settings> = {}): S3Settings => ({ ...s3SettingsFrom(new Configuration(Object.entries(srv.config)), {}), ...more });
let runs = 0;

function flip(bytes: Uint8Array, offset: number): void {
  const i = offset < 0 ? bytes.length + offset : offset;
  bytes[i] = bytes[i]! ^ 0xff;
}

// Registered with or without Java, so that a missing `java` shows as skipped tests.
describe.skipIf(!hasJava)('S3Proxy conformance', () => {
  checkpointStorageConformance({
    name: 's3 (S3Proxy on loopback, Signature V4 checked)',
    storesStateInFiles: true,
    async setUp({ jobId, dataInlineThresholdBytes }): Promise<StorageFixture> {
      const srv = await proxy();
      const client = new S3Client(settingsOf(srv));
      const prefix = `conformance-${++runs}`;
      const open = (): Promise<S3CheckpointStorage> => S3CheckpointStorage.open({ checkpointsDir: `s3://sluice/${prefix}`, jobId, client, dataInlineThresholdBytes });
      const metadataKey = (id: number): string => `${prefix}/${jobId}/chk-${id}/_metadata`;
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
});

describe.skipIf(!hasJava)('S3 requests against a server that checks signatures (S3Proxy)', () => {
  let srv: S3TestServer;
  beforeAll(async () => {
    srv = await proxy();
  }, 120_000);

  it('multipart upload with 5 MiB parts, listing, deleting', async () => {
    const client = new S3Client(settingsOf(srv));
    const bytes = seededBytes(11 * 1024 * 1024 + 5, 9);
    await client.put('sluice', 'multipart/big object', bytes);
    expect(await client.head('sluice', 'multipart/big object')).toBe(bytes.length);
    expect(await client.get('sluice', 'multipart/big object')).toEqual(bytes);
    expect((await client.list('sluice', 'multipart/')).keys).toEqual(['multipart/big object']);
    await client.delete('sluice', 'multipart/big object');
    expect(await client.get('sluice', 'multipart/big object')).toBeUndefined();
  }, 60_000);

  it('a wrong secret key is refused, with the options to check', async () => {
    const client = new S3Client(settingsOf(srv, { secretAccessKey: 'wrong', retryLimit: 0 }));
    await expect(S3CheckpointStorage.open({ checkpointsDir: 's3://sluice/denied', jobId: TEST_JOB_ID, client })).rejects.toThrow(
      /checkpoint directory s3:\/\/sluice\/denied is not accessible \(PUT .*HTTP 403 SignatureDoesNotMatch.*\); check s3.access-key and s3.secret-key/,
    );
  });
});
