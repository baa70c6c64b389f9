import { describe, expect, it } from 'vitest';
import { JobManager } from '../cluster/job-manager.js';
import { Configuration, isSensitiveKey } from './configuration.js';
import { MAX_DURATION_MS } from './options.js';

const set = (key: string, value: string | number): Configuration => new Configuration().set(key, value);

describe('configuration values are checked when they are set', () => {
  it('ports are 0..65535', () => {
    expect(set('rest.port', '65535').getNumber('rest.port')).toBe(65_535);
    for (const key of ['rest.port', 'jobmanager.rpc.port', 'taskmanager.data.port', 'metrics.reporter.prom.port']) {
      expect(() => set(key, '70000')).toThrow(new RegExp(`invalid value "70000" for '${key.replace(/\./g, '\\.')}': must be <= 65535`));
      expect(() => set(key, -1)).toThrow(/must be >= 0/);
    }
  });

  it('durations are finite, within what a Node.js timer takes, and at least their minimum', () => {
    expect(set('execution.checkpointing.interval', '24 d').getNumber('execution.checkpointing.interval')).toBe(24 * 86_400_000);
    expect(set('slot.request.timeout', MAX_DURATION_MS).getNumber('slot.request.timeout')).toBe(MAX_DURATION_MS);
    // A longer setTimeout fires after 1 ms: the slot request would time out at once.
    expect(() => set('slot.request.timeout', '30 d')).toThrow(/'slot\.request\.timeout': must be at most 2147483647 ms \(24\.8 days, the longest timer Node\.js has\)/);
    expect(() => set('execution.checkpointing.timeout', Number.POSITIVE_INFINITY)).toThrow(/must be a number of milliseconds >= 0/);
    expect(() => set('execution.checkpointing.timeout', Number.NaN)).toThrow(/must be a number of milliseconds >= 0/);
    // 0 would be a heartbeat loop that never yields a tick's worth of time.
    expect(() => set('heartbeat.interval', '0 ms')).toThrow(/'heartbeat\.interval': must be at least 1 ms/);
    expect(() => set('heartbeat.timeout', 0)).toThrow(/'heartbeat\.timeout': must be at least 1 ms/);
  });

  it('a heartbeat timeout not larger than the interval stops the JobManager with the fix', () => {
    const config = new Configuration([
      ['heartbeat.interval', '5 s'],
      ['heartbeat.timeout', '5 s'],
    ]);
    expect(() => new JobManager({ config, log: () => {} })).toThrow(
      /heartbeat\.timeout \(5000 ms\) must be larger than heartbeat\.interval \(5000 ms\).*raise the timeout or lower the interval/,
    );
  });
});

describe('sensitive keys (hidden in the REST API, as Flink hides them)', () => {
  it('hides tokens, secrets and passwords by their key, and shows the rest', () => {
    for (const k of ['rest.auth.token', 'cluster.secret', 's3.secret-key', 'my.db.password', 'x.apikey']) expect(isSensitiveKey(k), k).toBe(true);
    for (const k of ['s3.access-key', 'rest.port', 'execution.checkpointing.dir', 'state.backend.type']) expect(isSensitiveKey(k), k).toBe(false);
  });
});
