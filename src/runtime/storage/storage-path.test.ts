import { describe, expect, it } from 'vitest';
import { isStorageUri, joinStoragePath } from './storage-path.js';

describe('joinStoragePath', () => {
  it('keeps the scheme of a URI (path.join made s3:// into a local s3:/ path)', () => {
    expect(joinStoragePath('s3://bucket/checkpoints', 'jobmanager-ha')).toBe('s3://bucket/checkpoints/jobmanager-ha');
    expect(joinStoragePath('s3://bucket/checkpoints/', 'job', 'chk-3')).toBe('s3://bucket/checkpoints/job/chk-3');
    expect(joinStoragePath('s3a://bucket', 'a/b', '', './c')).toBe('s3a://bucket/a/b/c');
    expect(joinStoragePath('s3://bucket/', 'x')).toBe('s3://bucket/x');
    expect(joinStoragePath('s3://bucket/p')).toBe('s3://bucket/p');
  });

  it('joins local paths as path.join does', () => {
    expect(joinStoragePath('/tmp/chk', 'jobmanager-ha')).toBe('/tmp/chk/jobmanager-ha');
    expect(joinStoragePath('./chk/', 'a')).toBe('chk/a');
    expect(joinStoragePath('C:relative', 'a')).toBe('C:relative/a');
  });

  it('refuses .. under a URI', () => {
    expect(() => joinStoragePath('s3://bucket/p', '../q')).toThrow(/may not contain '\.\.'/);
  });

  it('tells URIs from local paths', () => {
    expect(isStorageUri('s3://b/k')).toBe(true);
    expect(isStorageUri('jobmanager://x')).toBe(true);
    expect(isStorageUri('/tmp/s3:/b')).toBe(false);
    expect(isStorageUri('s3:/b/k')).toBe(false);
  });
});
