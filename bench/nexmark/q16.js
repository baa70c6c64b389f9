// Nexmark q16, channel statistics report: q15 per channel and day, with the last minute of the
// day the channel had a bid.
//   SELECT channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd') as day, max(DATE_FORMAT(dateTime, 'HH:mm')) as minute,
//     count(*) AS total_bids, ... (as q15)
//   FROM bid GROUP BY channel, DATE_FORMAT(dateTime, 'yyyy-MM-dd')
import { valueState } from 'sluice';
import { addBid, bidStatistics, openBidStatistics } from './bid-statistics.js';
import { dayOf, END_OF_INPUT, formatDay, formatHourMinute, line } from './common.js';

export default {
  name: 'q16',
  title: 'channel statistics report',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .keyBy((b) => `${b.channel}|${dayOf(b.dateTime)}`)
      .process({
        open(ctx) {
          this.stats = openBidStatistics(ctx);
          this.last = ctx.getState(valueState('last'));
        },
        processElement(b, ctx) {
          if (addBid(this.stats, b)) ctx.timerService().registerEventTimeTimer(END_OF_INPUT);
          const last = this.last.value();
          if (last === undefined || b.dateTime > last.dateTime) this.last.update({ channel: b.channel, dateTime: b.dateTime });
        },
        onTimer(_t, _ctx, out) {
          const last = this.last.value();
          out.collect({ channel: last.channel, day: formatDay(dayOf(last.dateTime)), minute: formatHourMinute(last.dateTime), counts: bidStatistics(this.stats) });
        },
      }),
  format: (r) => line(r.channel, r.day, r.minute, ...r.counts),
};
