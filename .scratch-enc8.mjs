import { NO_TIMESTAMP } from './dist/runtime/channel/stream-element.js';
import * as g from './dist/connectors/generator/nexmark/nexmark-generator.js';
import { resolveNexmarkConfig } from './dist/connectors/generator/nexmark/nexmark-config.js';
import { Packr } from 'msgpackr';
const cfg = resolveNexmarkConfig({});
const N = 3_000_000;
const events = [];
const variants = process.argv.slice(2);
const mods = await Promise.all(variants.map((v) => import(`./dist/cluster/wire/${v}.js`)));
const res = variants.map(() => []);
for (let r = 0; r < 5; r++) for (let k = 0; k < variants.length; k++) {
  const enc = new mods[k].RecordBatchEncoder(new Packr());
  const t = performance.now(); let n = 0;
  let v = [], ts = [];
  for (let i = 0; i < N; i++) {
    const e = g.nexmarkEventAt(i, cfg);
    if (e.kind !== 'bid') continue;
    v.push(e); ts.push(NO_TIMESTAMP); n++;
    if (v.length === 1024) { enc.encodeFrame(1, { values: v, timestamps: ts }); v = []; ts = []; }
  }
  res[k].push((performance.now() - t) * 1e6 / n);
}
for (let k = 0; k < variants.length; k++) console.log(variants[k].padEnd(14), res[k].map((x) => x.toFixed(0)).join(' '), 'median', res[k].sort((a, b) => a - b)[2].toFixed(0));
