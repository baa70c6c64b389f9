// Nexmark q12, processing-time windows: how many bids each bidder makes in each 10 seconds of
// the machine's clock.
//   SELECT bidder, count(*) as bid_count, window_start AS starttime, window_end AS endtime
//   FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))   -- p_time: PROCTIME()
//   GROUP BY bidder, window_start, window_end
// Not deterministic: which bids share a window depends on when they are processed.
import { TumblingProcessingTimeWindows } from 'sluice';
import { line } from './common.js';

export default {
  name: 'q12',
  title: 'processing-time windows',
  nondeterministic: 'windows of processing time: which bids share a window depends on when each is processed',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .map((b) => b.bidder)
      .keyBy((bidder) => bidder)
      .window(TumblingProcessingTimeWindows.of(10_000))
      .aggregate(
        { createAccumulator: () => 0, add: (_b, n) => n + 1, getResult: (n) => n, merge: (a, b) => a + b },
        (bidder, ctx, count) => ({ bidder, count, start: ctx.window.start, end: ctx.window.end }),
      ),
  format: (r) => line(r.bidder, r.count, r.start, r.end),
};
