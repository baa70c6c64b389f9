import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StreamExecutionEnvironment } from 'sluice';
import { orderEventTime, totalsPerCustomer, type CustomerTotal, type Order } from '../src/orders.ts';

const MINUTE = 60_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

async function run(orders: Order[]): Promise<CustomerTotal[]> {
  // An in-process job at parallelism 2; executeAndCollect runs it and hands back every record.
  const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
  const out: CustomerTotal[] = [];
  // A collection is one input in order, so its event time can be assigned after the source.
  const timed = env.fromCollection(orders).assignTimestampsAndWatermarks(orderEventTime);
  for await (const total of totalsPerCustomer(timed).executeAndCollect()) out.push(total);
  return out.sort((a, b) => a.windowStart.localeCompare(b.windowStart) || a.customer.localeCompare(b.customer));
}

test('sums each customer\'s orders per minute', async () => {
  const totals = await run([
    { orderId: 1, customer: 'ann', amountCents: 500, time: T0 + 1_000 },
    { orderId: 2, customer: 'bob', amountCents: 250, time: T0 + 2_000 },
    { orderId: 3, customer: 'ann', amountCents: 125, time: T0 + 59_999 },
    { orderId: 4, customer: 'ann', amountCents: 1_000, time: T0 + MINUTE },
  ]);
  assert.deepEqual(totals, [
    { customer: 'ann', windowStart: '2026-01-01T00:00:00.000Z', orders: 2, totalCents: 625 },
    { customer: 'bob', windowStart: '2026-01-01T00:00:00.000Z', orders: 1, totalCents: 250 },
    { customer: 'ann', windowStart: '2026-01-01T00:01:00.000Z', orders: 1, totalCents: 1_000 },
  ]);
});

test('an order up to 5 s late still counts in its own minute', async () => {
  const totals = await run([
    { orderId: 1, customer: 'ann', amountCents: 100, time: T0 + MINUTE + 3_000 },
    { orderId: 2, customer: 'ann', amountCents: 200, time: T0 + 59_000 },
  ]);
  assert.deepEqual(totals.map((t) => [t.windowStart, t.totalCents]), [
    ['2026-01-01T00:00:00.000Z', 200],
    ['2026-01-01T00:01:00.000Z', 100],
  ]);
});
