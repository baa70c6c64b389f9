// The lines of the word count benchmarks (wordcount, tcp-wordcount): line i is
//   `${words[i % 12]} ${words[(i * 7) % 12]} ${words[(i * 13 + 5) % 12]}-${i % 1000}`
// (three words; 3,012 distinct words). Its content repeats every 3,000 lines, so the 3,000
// lines are written once into bytes, and each record is decoded from them as a file or Kafka
// source decodes a line: a fresh flat string. (Until 2026-12-06 each line was built by string
// concatenation, which V8 keeps as a rope that `split` first flattens: not what a source of
// text hands a job. In five alternating pairs of tcp-wordcount runs the decoded lines were
// 2-16% faster, median 10%.)
const words = ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'stream', 'state', 'barrier', 'checkpoint'];
const PERIOD = 3000;
const text = Array.from({ length: PERIOD }, (_, i) => `${words[i % 12]} ${words[(i * 7) % 12]} ${words[(i * 13 + 5) % 12]}-${i % 1000}`);
const bytes = Buffer.from(text.join(''), 'latin1');
const offsets = new Int32Array(PERIOD + 1);
for (let i = 0; i < PERIOD; i++) offsets[i + 1] = offsets[i] + text[i].length;

/** Line `i` of the benchmark text, decoded from bytes. */
export function lineAt(i) {
  const j = i % PERIOD;
  return bytes.toString('latin1', offsets[j], offsets[j + 1]);
}
