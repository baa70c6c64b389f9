/**
 * Session windows: clicks of users grouped into sessions, a session being a burst of clicks
 * with less than 5 seconds of event time between two of them.
 *
 *   npx sluice run examples/sessions.ts [clicks]      (default 200 clicks)
 *   npx sluice run -p 2 examples/sessions.ts 1000
 *
 * One click every 2 seconds of event time, in blocks of 5 clicks by the same user; the user
 * of each block follows a fixed pattern, so some users click in two blocks in a row (one
 * session of 10 clicks) and come back later (a new session). Timestamps increase, so
 * `forMonotonousTimestamps` fits and no click is late.
 *
 * Output, one line per session (the window ends one gap after the session's last click):
 *   ann 00:00:00-00:00:23 clicks=10 pages=cart,home,item,search
 */
import { defineJob, EventTimeSessionWindows, WatermarkStrategy, type ProcessWindowFunction } from 'sluice';
import { PrintSink } from 'sluice/connectors';

interface Click {
  user: string;
  page: string;
  /** Event time, epoch milliseconds. */
  ts: number;
}

const START = Date.UTC(2024, 0, 1);
const GAP_MS = 5000;
const USERS_BY_BLOCK = ['ann', 'ann', 'bob', 'cem', 'bob', 'dee', 'ann', 'cem', 'cem', 'bob'];
const PAGES = ['home', 'search', 'item', 'cart', 'checkout'];

function click(i: number): Click {
  const block = Math.floor(i / 5);
  return { user: USERS_BY_BLOCK[block % USERS_BY_BLOCK.length]!, page: PAGES[(block + Math.floor((i % 5) / 2)) % PAGES.length]!, ts: START + i * 2000 };
}

const time = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

/** Sees every click of a session when the session's window fires. */
const summarize: ProcessWindowFunction<Click, string, string> = {
  process(user, ctx, clicks, out) {
    const pages = [...new Set(clicks.map((c) => c.page))].sort().join(',');
    out.collect(`${user} ${time(ctx.window.start)}-${time(ctx.window.end)} clicks=${clicks.length} pages=${pages}`);
  },
};

export default defineJob((env, args) => {
  const count = Number(args[0] ?? 200);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`usage: sluice run examples/sessions.ts [clicks]: clicks must be a positive integer, got '${args[0]}'`);
  env
    .fromElements(...Array.from({ length: count }, (_, i) => click(i)))
    .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Click>().withTimestampAssigner((c) => c.ts))
    .keyBy((c) => c.user)
    .window(EventTimeSessionWindows.withGap(GAP_MS))
    .process(summarize)
    .name('sessions')
    .uid('sessions')
    .sinkTo(new PrintSink<string>())
    .setParallelism(1);
});
