import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelSpec } from '../../runtime/deploy/task-wiring.js';
import type { ChannelElement, RecordBatch } from '../../runtime/channel/stream-element.js';
import { DataEndpoint } from './data-endpoint.js';

const endpoints: DataEndpoint[] = [];
afterEach(async () => {
  for (const e of endpoints.splice(0)) await e.stop();
});

const until = async (cond: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
};

const spec = (id: number, capacityBuffers: number): ChannelSpec =>
  ({ id, capacityBuffers, target: { id: 1 }, consumer: 0, source: { id: 0 }, producer: 0 }) as unknown as ChannelSpec;

const batch = (from: number, n = 3): RecordBatch => ({ kind: 'batch', values: Array.from({ length: n }, (_, i) => ({ n: from + i })), timestamps: Array.from({ length: n }, () => 0) });

async function pair(secret?: string, consumerSecret = secret) {
  return pairWithEndpoints(secret, consumerSecret);
}

async function pairWithEndpoints(secret?: string, consumerSecret = secret) {
  const a = new DataEndpoint('tm-a', secret, () => {});
  const b = new DataEndpoint('tm-b', consumerSecret, () => {});
  endpoints.push(a, b);
  await a.start('127.0.0.1');
  const bAddr = await b.start('127.0.0.1');
  const na = a.attempt('job', 0);
  const nb = b.attempt('job', 0);
  na.peers.set('tm-b', bAddr);
  na.placement = () => 'tm-b';
  return { na, nb, a, b };
}

describe('data plane between two TaskManagers (real loopback sockets)', () => {
  it('delivers elements in order, and credit-based flow control bounds what is in flight', async () => {
    const { na, nb } = await pair('s3cret');
    const out = na.output(spec(7, 4));
    const inp = nb.input(spec(7, 4));
    // No credit yet: batches wait at the producer, and it reports full at its capacity.
    for (let i = 0; i < 10; i++) {
      out.push(batch(i * 3));
      out.push({ kind: 'watermark', timestampMs: i });
    }
    expect(out.isFull()).toBe(true);
    await until(() => inp.queuedBuffers === 4, 'the consumer to receive its capacity');
    await new Promise((r) => setTimeout(r, 50));
    expect(inp.queuedBuffers).toBe(4); // never more than the credit it granted
    let writable = false;
    out.onWritable(() => (writable = true));
    const got: ChannelElement[] = [];
    await until(() => {
      for (let e = inp.poll(); e !== undefined; e = inp.poll()) got.push(e);
      return got.length === 20;
    }, 'all elements');
    expect(writable).toBe(true);
    expect(out.isFull()).toBe(false);
    const values = got.flatMap((e) => (e.kind === 'batch' ? (e.values as { n: number }[]).map((v) => v.n) : []));
    expect(values).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(got.filter((e) => e.kind === 'watermark').map((e) => (e.kind === 'watermark' ? e.timestampMs : -1))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('an unaligned barrier overtakes unsent and queued data, which is handed out as overtaken', async () => {
    const { na, nb } = await pair();
    const out = na.output(spec(1, 2));
    const inp = nb.input(spec(1, 2));
    for (let i = 0; i < 5; i++) out.push(batch(i * 3));
    await until(() => inp.queuedBuffers === 2, 'two credited batches');
    const rest = out.pushPriority({ kind: 'barrier', checkpointId: 9, timestampMs: 0, options: { unaligned: true } } as never);
    expect(rest.length).toBe(3);
    await until(() => inp.peek()?.kind === 'barrier', 'the barrier at the head');
    expect(inp.poll()?.kind).toBe('barrier');
    const overtaken = inp.takeOvertaken(9);
    expect(overtaken.flatMap((b) => (b.values as { n: number }[]).map((v) => v.n))).toEqual(Array.from({ length: 15 }, (_, i) => i));
    // The data still follows, in order, after the barrier.
    const after: number[] = [];
    await until(() => {
      for (let e = inp.poll(); e !== undefined; e = inp.poll()) if (e.kind === 'batch') after.push(...(e.values as { n: number }[]).map((v) => v.n));
      return after.length === 15;
    }, 'the data behind the barrier');
    expect(after).toEqual(Array.from({ length: 15 }, (_, i) => i));
    // Uncredited batches earn no credit back: the producer has exactly the capacity again.
    for (let i = 0; i < 3; i++) out.push(batch(100 + i * 3));
    await until(() => inp.queuedBuffers === 2, 'two new batches');
    await new Promise((r) => setTimeout(r, 50));
    expect(inp.queuedBuffers).toBe(2);
  });

  it('a peer without the cluster secret is refused', async () => {
    const { na, nb } = await pair('right', 'other');
    let broken: Error | undefined;
    na.onBroken = (e) => (broken = e);
    const out = na.output(spec(3, 2));
    nb.input(spec(3, 2));
    out.push(batch(0));
    await until(() => broken !== undefined, 'the connection to be refused');
    expect(broken!.message).toMatch(/data connection to TaskManager tm-b closed/);
  });

  it('a finished producer closes its connection only after what waited for credit went out', async () => {
    const { na, nb, a } = await pairWithEndpoints();
    let broken: Error | undefined;
    nb.onBroken = (e) => (broken = e);
    const out = na.output(spec(5, 2));
    const inp = nb.input(spec(5, 2));
    for (let i = 0; i < 8; i++) out.push(batch(i * 3));
    out.push({ kind: 'end-of-partition', suspend: false });
    await until(() => inp.queuedBuffers === 2, 'two credited batches');
    // The producer's tasks are done, but six batches and the end still wait for credit.
    const released = a.releaseFinished('job', 0);
    const values: number[] = [];
    let ended = false;
    await until(() => {
      for (let e = inp.poll(); e !== undefined; e = inp.poll()) {
        if (e.kind === 'batch') values.push(...(e.values as { n: number }[]).map((v) => v.n));
        if (e.kind === 'end-of-partition') ended = true;
      }
      return ended;
    }, 'every batch and the end of partition');
    await released;
    expect(values).toEqual(Array.from({ length: 24 }, (_, i) => i));
    await new Promise((r) => setTimeout(r, 50));
    expect(broken).toBeUndefined();
  });
});
