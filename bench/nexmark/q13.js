// Nexmark q13, bounded side input join: every bid with a value looked up in a table read from a
// file (events-file.js writes it: keys 0..9,999).
//   SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
//   FROM (SELECT *, PROCTIME() as p_time FROM bid) B
//   JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S ON mod(B.auction, 10000) = S.key
// The side input is loaded when the function opens (`options.sideInput`: the file's path).
import { readFileSync } from 'node:fs';
import { line } from './common.js';

function loadSideInput(path) {
  const table = new Map();
  for (const row of readFileSync(path, 'utf8').split('\n')) {
    if (row === '') continue;
    const tab = row.indexOf('\t');
    table.set(Number(row.slice(0, tab)), row.slice(tab + 1));
  }
  return table;
}

export default {
  name: 'q13',
  title: 'bounded side input join',
  build(events, options) {
    const path = options?.sideInput;
    if (path === undefined) throw new Error('q13 needs options.sideInput: the side input file (events-file.js writeSideInputFile)');
    return events
      .filter((e) => e.kind === 'bid')
      .process({
        open() {
          this.side = loadSideInput(path);
        },
        processElement(b, _ctx, out) {
          const value = this.side.get(b.auction % 10_000);
          if (value !== undefined) out.collect({ auction: b.auction, bidder: b.bidder, price: b.price, dateTime: b.dateTime, value });
        },
      });
  },
  format: (r) => line(r.auction, r.bidder, r.price, r.dateTime, r.value),
};
