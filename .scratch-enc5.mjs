import { RecordBatchEncoder } from './dist/cluster/wire/record-batch-codec.js';
import { NO_TIMESTAMP } from './dist/runtime/channel/stream-element.js';
import * as g0 from './dist/connectors/generator/nexmark/nexmark-generator.js'; import { resolveNexmarkConfig } from './dist/connectors/generator/nexmark/nexmark-config.js'; const g = { ...g0, resolveNexmarkConfig };
import { Packr } from 'msgpackr';
const cfg = g.resolveNexmarkConfig({});
const bids = [];
for (let i = 0; bids.length < 2_000_000; i++) { const e = g.nexmarkEventAt(i, cfg); if (e.kind === 'bid') bids.push(e); }
const enc = new RecordBatchEncoder(new Packr());
const batches = [];
for (let i = 0; i < bids.length; i += 1024) { const v = bids.slice(i, i + 1024); batches.push({ values: v, timestamps: v.map(() => NO_TIMESTAMP) }); }
for (let r = 0; r < 5; r++) {
  const t = performance.now(); let bytes = 0;
  for (const x of batches) bytes += enc.encodeFrame(1, x).length;
  console.log(((performance.now() - t) * 1e6 / bids.length).toFixed(1), 'ns/bid', (bytes / bids.length).toFixed(1), 'bytes/bid', 'dict', enc.dictionarySize);
}
const variants = {
  plain: function (s) { this.plainString(s); },
  skip: function (s) { this.ensure(1); this.buffer[this.position++] = 0; },
};
for (const [name, fn] of Object.entries(variants)) {
  const e2 = new RecordBatchEncoder(new Packr());
  e2.string = fn;
  for (let r = 0; r < 3; r++) {
    const t = performance.now(); let bytes = 0;
    for (const x of batches) bytes += e2.encodeFrame(1, x).length;
    console.log(name, ((performance.now() - t) * 1e6 / bids.length).toFixed(1), 'ns/bid', (bytes / bids.length).toFixed(1), 'bytes/bid');
  }
}
{
  const e3 = new RecordBatchEncoder(new Packr());
  e3.string = variants.skip;
  const orig = e3.object;
  e3.object = function (o, depth) {
    const last = this.last;
    if (last !== undefined) {
      const keys = last.keys; const n = keys.length; let i = 0; let ok = true;
      for (const k in o) { if (i >= n || k !== keys[i]) { ok = false; break; } i++; }
      if (ok && i === n) {
        this.ensure(5);
        this.buffer[this.position] = 9;
        this.view.setUint16(this.position + 1, last.id, true);
        this.position += 3;
        last.write(o, this, depth);
        return true;
      }
    }
    return orig.call(this, o, depth);
  };
  for (let r = 0; r < 3; r++) {
    const t = performance.now(); let bytes = 0;
    for (const x of batches) bytes += e3.encodeFrame(1, x).length;
    console.log('forin+skip', ((performance.now() - t) * 1e6 / bids.length).toFixed(1), 'ns/bid', (bytes / bids.length).toFixed(1), 'bytes/bid');
  }
}
