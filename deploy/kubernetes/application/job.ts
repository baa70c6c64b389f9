// The application's job: replace this file with yours (or bake your job into an image built
// FROM the Sluice image and point the submitter at it).
import { defineJob } from 'sluice';
import { numberSource, PrintSink } from 'sluice/connectors';

export default defineJob((env) => {
  env
    .fromSource(numberSource({ count: 1_000_000, eventsPerSecond: 1_000 }), 'numbers')
    .uid('numbers')
    .map((n) => `number ${n}`)
    .uid('format')
    .sinkTo(new PrintSink<string>())
    .uid('print');
});
