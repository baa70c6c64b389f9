/**
 * Two joins over the Nexmark stream of persons and auctions, keyed by person id = seller.
 *
 *   npx sluice run examples/nexmark-new-sellers.ts [events]      (default 50000 events)
 *
 * Nexmark query 8, "monitor new users", as a window coGroup: the people who registered and put
 * an item up for auction in the same 10-second tumbling window of event time, once per person
 * however many auctions they opened (the reason for coGroup rather than join):
 *   new seller 1000 (peter jones) in 00:00:00-00:00:10: 3 auctions
 *
 * An interval join: every auction opened within 2 seconds after its seller registered, whatever
 * the windows:
 *   auction 1001 by 1000 (peter jones), 400 ms after registering
 *
 * The generator's events are in timestamp order, so a watermark right behind the largest
 * timestamp (forBoundedOutOfOrderness(0)) makes no record late.
 */
import { defineJob, TumblingEventTimeWindows, WatermarkStrategy } from 'sluice';
import { nexmarkSource, PrintSink, type Auction, type NexmarkEvent, type Person } from 'sluice/connectors';

const WINDOW_MS = 10_000;
const hhmmss = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

export default defineJob((env, args) => {
  const events = Number(args[0] ?? 50_000);
  if (!Number.isSafeInteger(events) || events < 1) throw new Error(`events must be a positive integer, got '${args[0]}'`);
  const nexmark = env
    .fromSource(nexmarkSource({ events, config: { firstEventRate: 10_000 } }), 'Nexmark')
    .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<NexmarkEvent>(0));
  const persons = nexmark.filter((e): e is Person => e.kind === 'person');
  const auctions = nexmark.filter((e): e is Auction => e.kind === 'auction');

  persons
    .coGroup(auctions)
    .where((p) => p.id)
    .equalTo((a) => a.seller)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .apply<string>((registered, opened, out) => {
      if (opened.length === 0) return;
      for (const p of registered) {
        const start = p.dateTime - (p.dateTime % WINDOW_MS);
        out.collect(`new seller ${p.id} (${p.name}) in ${hhmmss(start)}-${hhmmss(start + WINDOW_MS)}: ${opened.length} auctions`);
      }
    })
    .uid('new-sellers')
    .sinkTo(new PrintSink<string>());

  persons
    .keyBy((p) => p.id)
    .intervalJoin(auctions.keyBy((a) => a.seller))
    .between(0, 2_000)
    .process<string>({
      processElement: (p, a, ctx, out) => out.collect(`auction ${a.id} by ${p.id} (${p.name}), ${ctx.getRightTimestamp() - ctx.getLeftTimestamp()} ms after registering`),
    })
    .uid('fresh-auctions')
    .sinkTo(new PrintSink<string>());
});
