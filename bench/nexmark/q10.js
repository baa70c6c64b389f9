// Nexmark q10, log to file system: every bid with its day and minute, written into files
// partitioned by them (<dir>/dt=<yyyy-MM-dd>/hm=<HH:mm>/part-<subtask>, CSV).
//   INSERT INTO nexmark_q10 (a filesystem table PARTITIONED BY (dt, hm), format csv)
//   SELECT auction, bidder, price, dateTime, extra, DATE_FORMAT(dateTime, 'yyyy-MM-dd'),
//          DATE_FORMAT(dateTime, 'HH:mm') FROM bid
// `build` returns the rows it writes (compared with Flink's); the files are written when
// `options.filesDir` names a directory. Their content is the rows', but which part file holds a
// row and the order of rows in a file depend on the engine and the subtask, so the files
// themselves are not compared. (Flink's SQL sink also commits partitions a minute after their
// time and rolls files every minute; neither is done here.)
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { formatDay, formatHourMinute, dayOf, line } from './common.js';

const BUFFER_CHARS = 1 << 16;

/** Appends each row's CSV line to the part file of its partition, buffered per partition. */
class PartitionedFileSink {
  constructor(dir) {
    this.dir = dir;
  }
  createWriter(ctx) {
    const dir = this.dir;
    const buffers = new Map();
    const flushPartition = (partition, text) => {
      const path = join(dir, partition);
      mkdirSync(path, { recursive: true });
      appendFileSync(join(path, `part-${ctx.subtaskIndex}`), text);
    };
    return {
      write(r) {
        const partition = `dt=${r.dt}/hm=${r.hm}`;
        const text = (buffers.get(partition) ?? '') + `${r.auction},${r.bidder},${r.price},${r.dateTime},${r.extra}\n`;
        if (text.length < BUFFER_CHARS) buffers.set(partition, text);
        else {
          flushPartition(partition, text);
          buffers.delete(partition);
        }
      },
      flush() {
        for (const [partition, text] of buffers) flushPartition(partition, text);
        buffers.clear();
      },
    };
  }
}

export default {
  name: 'q10',
  title: 'log to file system',
  build(events, options) {
    const rows = events
      .filter((e) => e.kind === 'bid')
      .map((b) => ({ auction: b.auction, bidder: b.bidder, price: b.price, dateTime: b.dateTime, extra: b.extra, dt: formatDay(dayOf(b.dateTime)), hm: formatHourMinute(b.dateTime) }));
    if (options?.filesDir !== undefined) rows.sinkTo(new PartitionedFileSink(options.filesDir));
    return rows;
  },
  format: (r) => line(r.auction, r.bidder, r.price, r.dateTime, r.extra, r.dt, r.hm),
};
