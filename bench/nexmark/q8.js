// Nexmark q8, monitor new users: the people who registered and opened an auction in the same
// 10-second window.
//   SELECT P.id, P.name, P.starttime FROM (
//     SELECT id, name, window_start AS starttime, window_end AS endtime
//     FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//     GROUP BY id, name, window_start, window_end) P
//   JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
//     FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
//     GROUP BY seller, window_start, window_end) A
//   ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime
import { TumblingEventTimeWindows } from 'sluice';
import { line } from './common.js';

const WINDOW_MS = 10_000;

export default {
  name: 'q8',
  title: 'monitor new users',
  build(events) {
    const persons = events.filter((e) => e.kind === 'person');
    const auctions = events.filter((e) => e.kind === 'auction');
    return persons
      .coGroup(auctions)
      .where((p) => p.id)
      .equalTo((a) => a.seller)
      .window(TumblingEventTimeWindows.of(WINDOW_MS))
      .apply((registered, opened, out) => {
        if (opened.length === 0) return;
        // A person id registers once, but GROUP BY id, name would fold repeats all the same.
        const seen = new Set();
        for (const p of registered) {
          if (seen.has(p.id)) continue;
          seen.add(p.id);
          out.collect({ id: p.id, name: p.name, starttime: p.dateTime - (p.dateTime % WINDOW_MS) });
        }
      });
  },
  format: (r) => line(r.id, r.name, r.starttime),
};
