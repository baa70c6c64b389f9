import { describe, expect, it } from 'vitest';
import { Configuration } from './configuration.js';
import { normalizeStorageUri } from './storage-uri.js';

describe('storage directories', () => {
  it("read file: URIs as Flink writes them as local paths, keep s3:// and paths, refuse other schemes with what is supported", () => {
    expect(normalizeStorageUri('file:///data/checkpoints')).toBe('/data/checkpoints');
    expect(normalizeStorageUri('file:/data/checkpoints')).toBe('/data/checkpoints');
    expect(normalizeStorageUri('file:///data/with%20space')).toBe('/data/with space');
    expect(normalizeStorageUri('/data/checkpoints')).toBe('/data/checkpoints');
    expect(normalizeStorageUri('relative/dir')).toBe('relative/dir');
    expect(normalizeStorageUri('s3://bucket/prefix')).toBe('s3://bucket/prefix');
    expect(normalizeStorageUri('s3a://bucket/prefix')).toBe('s3a://bucket/prefix');
    expect(() => normalizeStorageUri('hdfs://namenode:8020/flink')).toThrow(/on S3-compatible storage \(s3:\/\/bucket\/prefix\), not hdfs:\/\//);
    expect(() => normalizeStorageUri('file://data/checkpoints')).toThrow(/not an absolute file: URI; write file:\/\/\/absolute\/path/);
  });

  it('apply to the checkpoint, savepoint and high-availability directories of a configuration', () => {
    const c = new Configuration([
      ['execution.checkpointing.dir', 'file:///data/chk'],
      ['execution.checkpointing.savepoint-dir', 'file:///data/sp'],
      ['high-availability.storageDir', 's3://bucket/ha'],
    ]);
    expect([c.getString('execution.checkpointing.dir'), c.getString('execution.checkpointing.savepoint-dir'), c.getString('high-availability.storageDir')]).toEqual(['/data/chk', '/data/sp', 's3://bucket/ha']);
    expect(() => new Configuration([['execution.checkpointing.dir', 'gs://bucket/chk']])).toThrow(/invalid value "gs:\/\/bucket\/chk" for 'execution\.checkpointing\.dir': .*not gs:\/\//);
  });
});
