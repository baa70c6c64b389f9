import { RecordBatchEncoder } from './dist/cluster/wire/record-batch-codec.js';
import { NO_TIMESTAMP } from './dist/runtime/channel/stream-element.js';
import * as g from './dist/connectors/generator/nexmark/nexmark-generator.js';
import { resolveNexmarkConfig } from './dist/connectors/generator/nexmark/nexmark-config.js';
import { Packr } from 'msgpackr';
const cfg = resolveNexmarkConfig({});
const skip = function (s) { this.ensure(1); this.buffer[this.position++] = 0; };
function forin(e3) {
  const orig = e3.object;
  e3.object = function (o, depth) {
    const last = this.last;
    if (last !== undefined) {
      const keys = last.keys; const n = keys.length; let i = 0; let ok = true;
      for (const k in o) { if (i >= n || k !== keys[i]) { ok = false; break; } i++; }
      if (ok && i === n) { this.ensure(5); this.buffer[this.position] = 9; this.view.setUint16(this.position + 1, last.id, true); this.position += 3; last.write(o, this, depth); return true; }
    }
    return orig.call(this, o, depth);
  };
}
const variants = { none: null, current: (e) => {}, skipStrings: (e) => { e.string = skip; }, forin: (e) => forin(e), forinSkip: (e) => { forin(e); e.string = skip; } };
const N = 3_000_000;
for (let r = 0; r < 2; r++) for (const [name, setup] of Object.entries(variants)) {
  const enc = new RecordBatchEncoder(new Packr());
  if (setup) setup(enc);
  const t = performance.now(); let n = 0; let bytes = 0;
  let v = [], ts = [];
  for (let i = 0; i < N; i++) {
    const e = g.nexmarkEventAt(i, cfg);
    if (e.kind !== 'bid') continue;
    v.push(e); ts.push(NO_TIMESTAMP); n++;
    if (v.length === 1024) { if (setup) bytes += enc.encodeFrame(1, { values: v, timestamps: ts }).length; v = []; ts = []; }
  }
  console.log(name.padEnd(12), ((performance.now() - t) * 1e6 / n).toFixed(1), 'ns/bid incl generation', (bytes / n).toFixed(1));
}
