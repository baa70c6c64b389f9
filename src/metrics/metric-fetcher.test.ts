import { describe, expect, it } from 'vitest';
import type { MetricSample } from './metric-group.js';
import { MetricFetcher } from './metric-fetcher.js';

const sample = (value: number): MetricSample => ({ scope: ['taskmanager', 'job', 'task'], variables: { job_id: 'j' }, name: 'numRecordsIn', kind: 'gauge', value });

describe('MetricFetcher', () => {
  it('fetches at most once per update interval per job; concurrent queries share a fetch; a failed fetch is empty and not kept', async () => {
    let now = 0;
    const fetched: string[] = [];
    let fail = false;
    const fetcher = new MetricFetcher(
      async (jobId) => {
        fetched.push(jobId);
        if (fail) throw new Error('down');
        return [sample(fetched.length)];
      },
      10_000,
      () => now,
    );
    const [a, b] = await Promise.all([fetcher.samples('j'), fetcher.samples('j')]);
    expect(a).toEqual([sample(1)]);
    expect(b).toBe(a);
    now = 9_999;
    expect(await fetcher.samples('j')).toEqual([sample(1)]);
    await fetcher.samples('k');
    expect(fetched).toEqual(['j', 'k']);
    now = 10_000;
    expect(await fetcher.samples('j')).toEqual([sample(3)]);
    fail = true;
    now = 20_000;
    expect(await fetcher.samples('j')).toEqual([]);
    fail = false;
    expect(await fetcher.samples('j')).toEqual([sample(5)]);
    fetcher.forget('j');
    expect(await fetcher.samples('j')).toEqual([sample(6)]);
  });

  it('with an interval of 0 every query fetches', async () => {
    let n = 0;
    const fetcher = new MetricFetcher(async () => [sample(++n)], 0, () => 0);
    await fetcher.samples('j');
    await fetcher.samples('j');
    expect(n).toBe(2);
  });
});
