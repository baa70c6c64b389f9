// Nexmark q22, get URL directories: bids with the first three directories of their url.
//   SELECT auction, bidder, price, channel, SPLIT_INDEX(url, '/', 3) as dir1,
//          SPLIT_INDEX(url, '/', 4) as dir2, SPLIT_INDEX(url, '/', 5) as dir3 FROM bid
import { line } from './common.js';

export default {
  name: 'q22',
  title: 'get URL directories',
  build: (events) =>
    events
      .filter((e) => e.kind === 'bid')
      .map((b) => {
        const parts = b.url.split('/');
        return { auction: b.auction, bidder: b.bidder, price: b.price, channel: b.channel, dir1: parts[3] ?? null, dir2: parts[4] ?? null, dir3: parts[5] ?? null };
      }),
  format: (r) => line(r.auction, r.bidder, r.price, r.channel, r.dir1, r.dir2, r.dir3),
};
