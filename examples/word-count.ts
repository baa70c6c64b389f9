/**
 * Word count, the classic streaming job: lines -> words -> count per word.
 *
 *   npx sluice run examples/word-count.ts               # counts the built-in text
 *   npx sluice run examples/word-count.ts notes.txt     # counts a file (or every file of a directory)
 *   npx sluice run -p 2 examples/word-count.ts notes.txt
 *
 * The count is a rolling reduce: every word prints `word,count` each time it is seen, so the
 * last line of a word is its total. With parallelism > 1 the print sink prefixes each line
 * with the subtask that printed it (`2> the,4`), as Flink's print() does.
 */
import { defineJob } from 'sluice';
import { FileSource, PrintSink } from 'sluice/connectors';

/** Used when no file is given. */
const TEXT = [
  'To be, or not to be, that is the question:',
  'Whether tis nobler in the mind to suffer',
  'The slings and arrows of outrageous fortune,',
  'Or to take arms against a sea of troubles',
  'And by opposing end them.',
];

/** Lower-case words of a line: runs of letters, digits and apostrophes. */
function words(line: string): string[] {
  return line.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}

export default defineJob((env, args) => {
  const lines = args[0] === undefined ? env.fromElements(...TEXT) : env.fromSource(new FileSource(args[0]), 'lines');
  lines
    .flatMap<[string, number]>((line, out) => {
      for (const w of words(line)) out.collect([w, 1]);
    })
    .name('split into words')
    .keyBy(([word]) => word)
    .reduce(([word, a], [, b]) => [word, a + b])
    .name('count per word')
    .uid('count-per-word')
    .map(([word, count]) => `${word},${count}`)
    .sinkTo(new PrintSink<string>());
});
