// Nexmark events in a file, so that Sluice and Flink (bench/flink) read the very same events:
// Sluice's generator (src/connectors/generator/nexmark) is not Nexmark's Java generator bit for
// bit (its randomness differs), so the comparison does not generate on both sides: Sluice
// writes the events once and both sides preload them into memory before the timed run.
//
// One event a line, tab-separated (no generated string holds a tab or a newline):
//   P  id  name  emailAddress  creditCard  city  state  dateTime  extra
//   A  id  itemName  description  initialBid  reserve  dateTime  expires  seller  category  extra
//   B  auction  bidder  price  channel  url  dateTime  extra
// Numbers are integers (ids, cents, epoch milliseconds). The side input of q13 is a second
// file: `key<TAB>value` lines for keys 0..9,999.
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { nexmarkEventAt, resolveNexmarkConfig } from 'sluice/connectors';

/** The line of one event. */
export function eventLine(e) {
  switch (e.kind) {
    case 'person':
      return `P\t${e.id}\t${e.name}\t${e.emailAddress}\t${e.creditCard}\t${e.city}\t${e.state}\t${e.dateTime}\t${e.extra}`;
    case 'auction':
      return `A\t${e.id}\t${e.itemName}\t${e.description}\t${e.initialBid}\t${e.reserve}\t${e.dateTime}\t${e.expires}\t${e.seller}\t${e.category}\t${e.extra}`;
    case 'bid':
      return `B\t${e.auction}\t${e.bidder}\t${e.price}\t${e.channel}\t${e.url}\t${e.dateTime}\t${e.extra}`;
    default:
      throw new Error(`not a Nexmark event: ${JSON.stringify(e)}`);
  }
}

/** The event of one line (the shapes of src/connectors/generator/nexmark/nexmark-model.ts). */
export function parseEventLine(line) {
  const f = line.split('\t');
  switch (f[0]) {
    case 'P':
      return { kind: 'person', id: Number(f[1]), name: f[2], emailAddress: f[3], creditCard: f[4], city: f[5], state: f[6], dateTime: Number(f[7]), extra: f[8] };
    case 'A':
      return {
        kind: 'auction', id: Number(f[1]), itemName: f[2], description: f[3], initialBid: Number(f[4]), reserve: Number(f[5]),
        dateTime: Number(f[6]), expires: Number(f[7]), seller: Number(f[8]), category: Number(f[9]), extra: f[10],
      };
    case 'B':
      return { kind: 'bid', auction: Number(f[1]), bidder: Number(f[2]), price: Number(f[3]), channel: f[4], url: f[5], dateTime: Number(f[6]), extra: f[7] };
    default:
      throw new Error(`not a Nexmark event line (P, A or B first): ${line.slice(0, 80)}`);
  }
}

/**
 * Writes events 0..count-1 of Sluice's Nexmark generator with `config` (NexmarkConfig fields;
 * firstEventRate sets how much event time they span) into `path`.
 */
export async function writeEventsFile(path, count, config = {}) {
  const resolved = resolveNexmarkConfig(config);
  const out = createWriteStream(path);
  let chunk = '';
  for (let i = 0; i < count; i++) {
    chunk += eventLine(nexmarkEventAt(i, resolved)) + '\n';
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

/** All events of a file, in its order (decoded line by line: the file may be larger than a string can be). */
export function readEventsFile(path) {
  const bytes = readFileSync(path);
  const events = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    if (end > start) events.push(parseEventLine(bytes.toString('latin1', start, end)));
    start = end + 1;
  }
  return events;
}

/** q13's side input: key k (0..9,999) has the value `side-<k * 7919 % 10000>`. */
export const SIDE_INPUT_KEYS = 10_000;
export function writeSideInputFile(path) {
  let text = '';
  for (let k = 0; k < SIDE_INPUT_KEYS; k++) text += `${k}\tside-${(k * 7919) % SIDE_INPUT_KEYS}\n`;
  writeFileSync(path, text);
}

/**
 * An order-independent digest of output lines, the same as bench/flink's Digest.java: the line
 * count and the sums (mod 2^32) of two 32-bit FNV-1a hashes of each line's characters.
 */
export class LinesDigest {
  count = 0;
  sum1 = 0;
  sum2 = 0;
  add(line) {
    let h1 = 0x811c9dc5 | 0;
    let h2 = 0x050c5d1f | 0;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x01000193) ^ (h2 >>> 15);
    }
    this.count++;
    this.sum1 = (this.sum1 + h1) | 0;
    this.sum2 = (this.sum2 + h2) | 0;
  }
  toString() {
    return `${this.count}:${(this.sum1 >>> 0).toString(16)}:${(this.sum2 >>> 0).toString(16)}`;
  }
}
