// Nexmark q21, add channel id: bids with the id of their channel, from a table for the big four
// and from the url's channel_id parameter for the others.
//   SELECT auction, bidder, price, channel,
//     CASE WHEN lower(channel) = 'apple' THEN '0' WHEN lower(channel) = 'google' THEN '1'
//          WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3'
//          ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id
//   FROM bid where REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or
//                  lower(channel) in ('apple', 'google', 'facebook', 'baidu')
import { line } from './common.js';

const KNOWN = new Map([['apple', '0'], ['google', '1'], ['facebook', '2'], ['baidu', '3']]);
const CHANNEL_ID = /(&|^)channel_id=([^&]*)/;

export default {
  name: 'q21',
  title: 'add channel id',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .flatMap((b, out) => {
        const id = KNOWN.get(b.channel.toLowerCase()) ?? CHANNEL_ID.exec(b.url)?.[2];
        if (id !== undefined) out.collect({ auction: b.auction, bidder: b.bidder, price: b.price, channel: b.channel, channelId: id });
      }),
  format: (r) => line(r.auction, r.bidder, r.price, r.channel, r.channelId),
};
