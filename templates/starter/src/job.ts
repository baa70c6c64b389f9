import { defineJob } from 'sluice';
import { GeneratorSource, PrintSink } from 'sluice/connectors';
import { orderEventTime, totalsPerCustomer, type CustomerTotal, type Order } from './orders.ts';

const START = Date.parse('2026-01-01T00:00:00Z');

/** A made-up, replayable stream of orders: order i is always the same order. */
function order(i: number): Order {
  return { orderId: i, customer: `customer-${(i * 7) % 5}`, amountCents: 100 + ((i * 37) % 900), time: START + i * 250 };
}

export default defineJob((env) => {
  const orders = env.fromSource(new GeneratorSource({ generate: order, count: 2_000 }), orderEventTime, 'orders');
  totalsPerCustomer(orders).sinkTo(new PrintSink<CustomerTotal>(), 'print totals');
});
