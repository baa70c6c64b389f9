import { RecordBatchEncoder } from './dist/cluster/wire/record-batch-codec.js';
import { NO_TIMESTAMP } from './dist/runtime/channel/stream-element.js';
import * as g from './dist/connectors/generator/nexmark/nexmark-generator.js';
import { resolveNexmarkConfig } from './dist/connectors/generator/nexmark/nexmark-config.js';
import { Packr } from 'msgpackr';
const cfg = resolveNexmarkConfig({});
const N = 6_000_000;
const enc = new RecordBatchEncoder(new Packr());
const mode = process.argv[2];
const t = performance.now(); let n = 0;
let v = [], ts = [];
for (let i = 0; i < N; i++) {
  const e = g.nexmarkEventAt(i, cfg);
  if (e.kind !== 'bid') continue;
  v.push(e); ts.push(NO_TIMESTAMP); n++;
  if (v.length === 1024) { if (mode !== 'none') enc.encodeFrame(1, { values: v, timestamps: ts }); v = []; ts = []; }
}
console.log(mode, ((performance.now() - t) * 1e6 / n).toFixed(1), 'ns/bid incl generation');
