import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pathForServer } from './rest-client.js';

describe('pathForServer', () => {
  it("makes a path relative to this shell absolute (the server resolves it in its own directory); URIs go as they are", () => {
    expect(pathForServer('savepoints/sp-1')).toBe(resolve('savepoints/sp-1'));
    expect(pathForServer('/tmp/sp')).toBe('/tmp/sp');
    expect(pathForServer('s3://bucket/savepoints')).toBe('s3://bucket/savepoints');
    expect(pathForServer('file:///tmp/sp')).toBe('file:///tmp/sp');
  });
});
