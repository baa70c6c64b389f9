import { TumblingEventTimeWindows, WatermarkStrategy, type DataStream } from 'sluice';

/** An order as it arrives: who bought, how much, and when (epoch milliseconds). */
export interface Order {
  readonly orderId: number;
  readonly customer: string;
  readonly amountCents: number;
  readonly time: number;
}

/** A running sum of orders. */
interface Totals {
  readonly orders: number;
  readonly totalCents: number;
}

/** What the job computes: one line per customer and window. */
export interface CustomerTotal {
  readonly customer: string;
  readonly windowStart: string;
  readonly orders: number;
  readonly totalCents: number;
}

/**
 * Event time: each order's own `time`, with orders up to 5 seconds out of order. Give it to the
 * source, `env.fromSource(source, orderEventTime, 'orders')`: a source that reads several
 * partitions (Kafka's) then tracks each one's time apart, so one that lags behind does not
 * make the others' orders late.
 */
export const orderEventTime = WatermarkStrategy.forBoundedOutOfOrderness<Order>(5_000).withTimestampAssigner((o) => o.time);

/**
 * Per-customer totals over tumbling event-time windows (one minute by default) of orders that
 * carry event time (`orderEventTime`); a window's total is emitted once the watermark passes
 * its end. Kept apart from the sources and sinks so tests can feed it their own orders.
 */
export function totalsPerCustomer(orders: DataStream<Order>, windowMs = 60_000): DataStream<CustomerTotal> {
  return orders
    .keyBy((o) => o.customer)
    .window(TumblingEventTimeWindows.of(windowMs))
    .aggregate(
      {
        createAccumulator: (): Totals => ({ orders: 0, totalCents: 0 }),
        add: (o, acc) => ({ orders: acc.orders + 1, totalCents: acc.totalCents + o.amountCents }),
        getResult: (acc) => acc,
        merge: (a, b) => ({ orders: a.orders + b.orders, totalCents: a.totalCents + b.totalCents }),
      },
      // Runs once per customer and window with the aggregate; what it returns is the output.
      (customer, ctx, totals): CustomerTotal => ({ customer, windowStart: new Date(ctx.window.start).toISOString(), ...totals }),
    )
    // The open windows are state: a uid finds them again in a savepoint of a changed job.
    .uid('totals-per-customer');
}
