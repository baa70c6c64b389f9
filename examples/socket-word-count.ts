/**
 * Flink's SocketWindowWordCount: words typed into a TCP connection, counted per word in
 * tumbling 5-second windows of processing time.
 *
 *   nc -lk 9999                                       # terminal 1: type some lines
 *   npx sluice run examples/socket-word-count.ts      # terminal 2: counts every 5 seconds
 *   npx sluice run examples/socket-word-count.ts 9999 localhost 2000   # port, host, window (ms)
 *
 * Output, one line per word and window: `the : 3`. The job ends when the connection closes
 * (`nc` without -k exits then); the window still open then is not emitted (processing-time
 * timers do not fire at the end of the input, as in Flink). A socket is not replayable: for
 * anything that must not lose or repeat data, read from Kafka or files (docs/connectors.md).
 */
import { defineJob, TumblingProcessingTimeWindows } from 'sluice';
import { PrintSink } from 'sluice/connectors';

interface WordWithCount {
  word: string;
  count: number;
}

export default defineJob((env, args) => {
  const port = Number(args[0] ?? 9999);
  const host = args[1] ?? 'localhost';
  const windowMs = Number(args[2] ?? 5_000);
  env
    .socketTextStream(host, port)
    .flatMap<WordWithCount>((line, out) => {
      for (const word of line.split(/\s+/)) if (word !== '') out.collect({ word, count: 1 });
    })
    .keyBy((w) => w.word)
    .window(TumblingProcessingTimeWindows.of(windowMs))
    .reduce((a, b) => ({ word: a.word, count: a.count + b.count }))
    .map((w) => `${w.word} : ${w.count}`)
    .sinkTo(new PrintSink<string>())
    .setParallelism(1);
});
