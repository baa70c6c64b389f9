// Nexmark q11, user sessions: how many bids each bidder makes in each of their sessions (bids
// less than 10 seconds apart).
//   SELECT B.bidder, count(*) as bid_count, SESSION_START(B.dateTime, INTERVAL '10' SECOND) as starttime,
//          SESSION_END(B.dateTime, INTERVAL '10' SECOND) as endtime
//   FROM bid B GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)
import { EventTimeSessionWindows } from 'sluice';
import { line } from './common.js';

export default {
  name: 'q11',
  title: 'user sessions',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .map((b) => b.bidder)
      .keyBy((bidder) => bidder)
      .window(EventTimeSessionWindows.withGap(10_000))
      .aggregate(
        { createAccumulator: () => 0, add: (_b, n) => n + 1, getResult: (n) => n, merge: (a, b) => a + b },
        (bidder, ctx, count) => ({ bidder, count, start: ctx.window.start, end: ctx.window.end }),
      ),
  format: (r) => line(r.bidder, r.count, r.start, r.end),
};
