/**
 * Every public entry point that produces a stream (src/index.ts, src/connectors/index.ts) and
 * the record type of what it produces; every sink that ends one, and what a sink of the wrong
 * type does: it does not compile. How collecting functions get their output type is pinned in
 * output-types.test-d.ts; the finer rules (keyed state, key types, triggers) in api.test-d.ts.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  AllWindowedStream,
  AsyncDataStream,
  broadcastState,
  BroadcastConnectedStream,
  BroadcastStream,
  CoGroupedStreams,
  CoGroupWindow,
  ConnectedKeyedStreams,
  ConnectedStreams,
  CountWindowedStream,
  DataStream,
  DataStreamSink,
  IntervalJoin,
  IntervalJoined,
  JoinedStreams,
  JoinWindow,
  KeyedBroadcastConnectedStream,
  KeyedStream,
  KeysEqualTo,
  KeysWhere,
  OutputTag,
  SingleOutputStream,
  StreamExecutionEnvironment,
  TumblingEventTimeWindows,
  WatermarkStrategy,
  WindowedStream,
  type CollectResultIterator,
  type ResultFuture,
  type Sink,
} from '../src/index.js';
import {
  CollectionSource,
  CollectSink,
  DiscardingSink,
  ExactlyOnceFileSink,
  FileSink,
  FileSource,
  GeneratorSource,
  KafkaSink,
  KafkaSource,
  kafkaDeadLetter,
  nexmarkSource,
  numberSource,
  PostgresTwoPhaseCommitSink,
  PostgresUpsertSink,
  PostgresWriteAheadSink,
  postgresCdcSource,
  type ChangeRecord,
  type DebeziumJsonMessage,
  PrintSink,
  SocketTextSource,
  type ConsumedRecord,
  type NexmarkEvent,
} from '../src/connectors/index.js';

interface Bid {
  auction: number;
  bidder: string;
  price: number;
}
interface Person {
  id: number;
  name: string;
}

const env = StreamExecutionEnvironment.create();
const bids = env.fromElements<Bid>({ auction: 1, bidder: 'a', price: 10 });
const persons = env.fromElements<Person>({ id: 1, name: 'ann' });
const window = TumblingEventTimeWindows.of(1_000);

describe('sources: the environment', () => {
  it('fromElements, fromCollection, fromSequence, socketTextStream', () => {
    expectTypeOf(env.fromElements(1, 2)).toEqualTypeOf<SingleOutputStream<number>>();
    // @ts-expect-error values of several types need the union given: fromElements<string | number>(...)
    env.fromElements('a', 1);
    expectTypeOf(env.fromElements<string | number>('a', 1)).toEqualTypeOf<SingleOutputStream<string | number>>();
    expectTypeOf(env.fromCollection(new Set(['a']))).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(env.fromCollection<Bid>([])).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(env.fromSequence(0, 9)).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(env.socketTextStream('localhost', 9999)).toEqualTypeOf<SingleOutputStream<string>>();
    // @ts-expect-error the values must have the declared type
    env.fromElements<Bid>({ auction: 1 });
  });

  it('fromSource takes the record type of the source, and a watermark strategy of that type', () => {
    const source = new CollectionSource<Bid>([]);
    expectTypeOf(env.fromSource(source, 'bids')).toEqualTypeOf<SingleOutputStream<Bid>>();
    const strategy = WatermarkStrategy.forBoundedOutOfOrderness<Bid>(100).withTimestampAssigner((b) => b.price);
    expectTypeOf(env.fromSource(source, strategy, 'bids')).toEqualTypeOf<SingleOutputStream<Bid>>();
    // @ts-expect-error a strategy for numbers cannot time Bids
    env.fromSource(source, WatermarkStrategy.forMonotonousTimestamps<number>(), 'bids');
  });
});

describe('sources: the connectors', () => {
  it('generators: numbers, Nexmark events, and records of a generate function', () => {
    expectTypeOf(env.fromSource(numberSource({ count: 10 }), 'numbers')).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(env.fromSource(nexmarkSource({ events: 10 }), 'nexmark')).toEqualTypeOf<SingleOutputStream<NexmarkEvent>>();
    expectTypeOf(new GeneratorSource({ generate: (i) => ({ i, even: i % 2 === 0 }) })).toEqualTypeOf<GeneratorSource<{ i: number; even: boolean }>>();
    expectTypeOf(env.fromSource(new GeneratorSource({ generate: (i) => `${i}` }), 'strings')).toEqualTypeOf<SingleOutputStream<string>>();
  });

  it('files and sockets give lines; a collection its values', () => {
    expectTypeOf(env.fromSource(new FileSource('in.txt'), 'lines')).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(env.fromSource(new SocketTextSource({ host: 'localhost', port: 9999 }), 'lines')).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(env.fromSource(new CollectionSource([1, 2]), 'numbers')).toEqualTypeOf<SingleOutputStream<number>>();
  });

  it('Kafka: strings by default; the type of a deserializer function, or the one given', () => {
    const connection = { bootstrapServers: 'localhost:9092', topics: 'in' } as const;
    expectTypeOf(env.fromSource(new KafkaSource(connection), 'kafka')).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(new KafkaSource({ ...connection, deserializer: (bytes) => bytes?.length ?? 0 })).toEqualTypeOf<KafkaSource<number>>();
    expectTypeOf(new KafkaSource({ ...connection, recordDeserializer: (r: ConsumedRecord) => r.partition })).toEqualTypeOf<KafkaSource<number>>();
    expectTypeOf(new KafkaSource<Bid>({ ...connection, deserializer: 'json' })).toEqualTypeOf<KafkaSource<Bid>>();
    // @ts-expect-error a deserializer of numbers does not make Bids
    new KafkaSource<Bid>({ ...connection, deserializer: (bytes: Buffer | undefined) => bytes?.length ?? 0 });
  });

  it('PostgreSQL CDC: change records typed per table, or Debezium messages', () => {
    const o = { slot: 's', publication: 'p' } as const;
    expectTypeOf(env.fromSource(postgresCdcSource<{ orders: { id: number } }>({ ...o, tables: ['orders'] }), 'cdc')).toEqualTypeOf<SingleOutputStream<ChangeRecord<{ id: number }, 'orders'>>>();
    expectTypeOf(env.fromSource(postgresCdcSource({ ...o, tables: ['orders'], format: 'debezium-json', topicPrefix: 'shop' }), 'cdc')).toEqualTypeOf<SingleOutputStream<DebeziumJsonMessage>>();
  });
});

describe('DataStream', () => {
  it('record-at-a-time operators', () => {
    expectTypeOf(bids.map((b) => b.price)).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(bids.filter((b) => b.price > 0)).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(env.fromElements<Bid | Person>().filter((x): x is Person => 'name' in x)).toEqualTypeOf<SingleOutputStream<Person>>();
    expectTypeOf(bids.flatMap<string>((b, out) => out.collect(b.bidder))).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(bids.process<number>({ processElement: (b, _ctx, out) => out.collect(b.price) })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(bids.assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Bid>())).toEqualTypeOf<SingleOutputStream<Bid>>();
    // @ts-expect-error a strategy for Persons cannot time Bids
    bids.assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps<Person>());
  });

  it('partitioning keeps the type and gives a DataStream (no operator settings)', () => {
    for (const s of [bids.rebalance(), bids.rescale(), bids.shuffle(), bids.global(), bids.forward(), bids.broadcast(), bids.partitionCustom((k: number, n) => k % n, (b) => b.auction)]) {
      expectTypeOf(s).toEqualTypeOf<DataStream<Bid>>();
    }
    expectTypeOf(bids.union(bids)).toEqualTypeOf<DataStream<Bid>>();
    expectTypeOf(bids.broadcast(broadcastState<string, number>('rules'))).toEqualTypeOf<BroadcastStream<Bid>>();
    // @ts-expect-error the key selector's key goes to the partitioner
    bids.partitionCustom((k: string, n) => k.length % n, (b) => b.auction);
  });

  it('keys, windows, connections and joins', () => {
    expectTypeOf(bids.keyBy((b) => b.bidder)).toEqualTypeOf<KeyedStream<Bid, string>>();
    expectTypeOf(bids.windowAll(window)).toEqualTypeOf<AllWindowedStream<Bid>>();
    expectTypeOf(bids.countWindowAll(10)).toEqualTypeOf<AllWindowedStream<Bid>>();
    expectTypeOf(bids.connect(persons)).toEqualTypeOf<ConnectedStreams<Bid, Person>>();
    expectTypeOf(bids.connect(persons.broadcast(broadcastState<string, number>('r')))).toEqualTypeOf<BroadcastConnectedStream<Bid, Person>>();
    expectTypeOf(bids.join(persons)).toEqualTypeOf<JoinedStreams<Bid, Person>>();
    expectTypeOf(bids.coGroup(persons)).toEqualTypeOf<CoGroupedStreams<Bid, Person>>();
  });

  it("operator settings keep the stream's type; side outputs have their tag's", () => {
    const prices = bids.map((b) => b.price);
    expectTypeOf(prices.uid('p').name('prices').setParallelism(2).setMaxParallelism(128).startNewChain().disableChaining()).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(prices.getSideOutput(new OutputTag<string>('late'))).toEqualTypeOf<DataStream<string>>();
  });

  it('sinks end the stream', () => {
    expectTypeOf(bids.sinkTo(new CollectSink<Bid>())).toEqualTypeOf<DataStreamSink>();
    expectTypeOf(bids.print()).toEqualTypeOf<DataStreamSink>();
    expectTypeOf(bids.printToErr('bids')).toEqualTypeOf<DataStreamSink>();
    expectTypeOf(bids.sinkTo(new DiscardingSink<Bid>()).uid('s').name('sink').setParallelism(1)).toEqualTypeOf<DataStreamSink>();
    expectTypeOf(bids.executeAndCollect()).toEqualTypeOf<CollectResultIterator<Bid>>();
    expectTypeOf(bids.executeAndCollect(5)).toEqualTypeOf<Promise<Bid[]>>();
  });
});

describe('KeyedStream', () => {
  const keyed = bids.keyBy((b) => b.auction);

  it('operators on the partitioned stream, keyed process, rolling reduce and aggregations', () => {
    expectTypeOf(keyed.map((b) => b.bidder)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(keyed.filter((b) => b.price > 0)).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(keyed.flatMap<number>((b, out) => out.collect(b.price))).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(keyed.process<string>({ processElement: (b, _ctx, out) => out.collect(b.bidder) })).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(keyed.reduce((a, b) => (a.price > b.price ? a : b))).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(keyed.aggregate({ createAccumulator: () => 0, add: (b: Bid, n: number) => n + b.price, getResult: (n) => `${n}` })).toEqualTypeOf<SingleOutputStream<string>>();
    for (const s of [keyed.sum('price'), keyed.min('price'), keyed.max('auction'), keyed.minBy('price'), keyed.maxBy('price')]) expectTypeOf(s).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(keyed.sinkTo(new CollectSink<Bid>())).toEqualTypeOf<DataStreamSink>();
  });

  it('windows, connections and interval joins', () => {
    expectTypeOf(keyed.window(window)).toEqualTypeOf<WindowedStream<Bid, number>>();
    expectTypeOf(keyed.countWindow(10, 5)).toEqualTypeOf<CountWindowedStream<Bid, number>>();
    const personsById = persons.keyBy((p) => p.id);
    expectTypeOf(keyed.connect(personsById)).toEqualTypeOf<ConnectedKeyedStreams<Bid, Person, number>>();
    expectTypeOf(keyed.connect(persons.broadcast(broadcastState<string, number>('r')))).toEqualTypeOf<KeyedBroadcastConnectedStream<Bid, Person, number>>();
    expectTypeOf(keyed.intervalJoin(personsById)).toEqualTypeOf<IntervalJoin<Bid, Person, number>>();
    expectTypeOf(keyed.intervalJoin(personsById).between(-1, 1).lowerBoundExclusive().upperBoundExclusive()).toEqualTypeOf<IntervalJoined<Bid, Person, number>>();
    // @ts-expect-error the late left records are Bids
    keyed.intervalJoin(personsById).between(-1, 1).sideOutputLeftLateData(new OutputTag<Person>('late'));
  });
});

describe('windows', () => {
  it('keyed windows: settings keep the type; reduce, aggregate, process and field aggregations', () => {
    const w = bids.keyBy((b) => b.bidder).window(window);
    expectTypeOf(w.allowedLateness(10).sideOutputLateData(new OutputTag<Bid>('late')).disableSlicing()).toEqualTypeOf<WindowedStream<Bid, string>>();
    expectTypeOf(w.reduce((a, b) => (a.price > b.price ? a : b))).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(w.aggregate({ createAccumulator: () => 0, add: (b: Bid, n: number) => n + b.price, getResult: (n) => n })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(w.process((key, _ctx, elements) => `${key}:${elements.length}`)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(w.sum('price')).toEqualTypeOf<SingleOutputStream<Bid>>();
  });

  it('count windows and windows without keys', () => {
    const c = bids.keyBy((b) => b.bidder).countWindow(3);
    expectTypeOf(c.reduce((a) => a)).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(c.process((key, _ctx, elements) => [key, elements.length] as [string, number])).toEqualTypeOf<SingleOutputStream<[string, number]>>();
    expectTypeOf(c.maxBy('price')).toEqualTypeOf<SingleOutputStream<Bid>>();
    const all = bids.windowAll(window);
    expectTypeOf(all.allowedLateness(0).sideOutputLateData(new OutputTag<Bid>('late')).disableSlicing()).toEqualTypeOf<AllWindowedStream<Bid>>();
    expectTypeOf(all.reduce((a) => a)).toEqualTypeOf<SingleOutputStream<Bid>>();
    expectTypeOf(all.aggregate({ createAccumulator: () => 0, add: (_b: Bid, n: number) => n + 1, getResult: (n) => n })).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(all.process((_ctx, elements) => elements.length)).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(all.min('price')).toEqualTypeOf<SingleOutputStream<Bid>>();
    // @ts-expect-error the late-data tag carries the records' type
    all.sideOutputLateData(new OutputTag<number>('late'));
  });
});

describe('connected streams', () => {
  it('unkeyed: process, map, flatMap, keyBy', () => {
    const c = bids.connect(persons);
    expectTypeOf(c.map((b) => b.price, (p) => p.id)).toEqualTypeOf<SingleOutputStream<number>>();
    // @ts-expect-error both functions return the output type, inferred from the first: give a union as map<number | string>(...)
    c.map((b) => b.price, (p) => p.name);
    expectTypeOf(c.map<number | string>((b) => b.price, (p) => p.name)).toEqualTypeOf<SingleOutputStream<number | string>>();
    expectTypeOf(c.flatMap<string>((b, out) => out.collect(b.bidder), (p, out) => out.collect(p.name))).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(c.process<number>({ processElement1: (b, _ctx, out) => out.collect(b.price), processElement2: (p, _ctx, out) => out.collect(p.id) })).toEqualTypeOf<
      SingleOutputStream<number>
    >();
    expectTypeOf(c.keyBy((b) => b.auction, (p) => p.id)).toEqualTypeOf<ConnectedKeyedStreams<Bid, Person, number>>();
    // @ts-expect-error both key selectors must give the same key type
    c.keyBy((b) => b.auction, (p) => p.name);
  });

  it('keyed: process, map, flatMap', () => {
    const c = bids.keyBy((b) => b.auction).connect(persons.keyBy((p) => p.id));
    expectTypeOf(c.map((b) => b.bidder, (p) => p.name)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(c.flatMap<number>((b, out) => out.collect(b.price), (p, out) => out.collect(p.id))).toEqualTypeOf<SingleOutputStream<number>>();
    expectTypeOf(
      c.process<number>({ processElement1: (b, ctx, out) => out.collect(b.price + ctx.getCurrentKey()), processElement2: (p, _ctx, out) => out.collect(p.id) }),
    ).toEqualTypeOf<SingleOutputStream<number>>();
  });

  it('broadcast-connected, unkeyed and keyed: process', () => {
    const rules = env.fromElements<[string, number]>(['x', 1]).broadcast(broadcastState<string, number>('rules'));
    expectTypeOf(bids.connect(rules).process<string>({ processElement: (b, _ctx, out) => out.collect(b.bidder), processBroadcastElement: () => {} })).toEqualTypeOf<
      SingleOutputStream<string>
    >();
    expectTypeOf(
      bids
        .keyBy((b) => b.auction)
        .connect(rules)
        .process<number>({ processElement: (_b, ctx, out) => out.collect(ctx.getCurrentKey()), processBroadcastElement: ([, n], _ctx, out) => out.collect(n) }),
    ).toEqualTypeOf<SingleOutputStream<number>>();
  });
});

describe('joins', () => {
  it('interval join: process', () => {
    const joined = bids
      .keyBy((b) => b.auction)
      .intervalJoin(persons.keyBy((p) => p.id))
      .between(0, 10)
      .process<string>({ processElement: (b, p, _ctx, out) => out.collect(`${b.price}:${p.name}`) });
    expectTypeOf(joined).toEqualTypeOf<SingleOutputStream<string>>();
  });

  it('window join: where, equalTo, window, then apply (returns) or flatApply (collects)', () => {
    const where = bids.join(persons).where((b) => b.auction);
    expectTypeOf(where).toEqualTypeOf<KeysWhere<Person, number, JoinWindow<Bid, Person, number>>>();
    const equalTo = where.equalTo((p) => p.id);
    expectTypeOf(equalTo).toEqualTypeOf<KeysEqualTo<JoinWindow<Bid, Person, number>>>();
    const joinWindow = equalTo.window(window).allowedLateness(10);
    expectTypeOf(joinWindow.apply((b, p) => [b, p] as const)).toEqualTypeOf<SingleOutputStream<readonly [Bid, Person]>>();
    expectTypeOf(joinWindow.flatApply<number>((b, _p, out) => out.collect(b.price))).toEqualTypeOf<SingleOutputStream<number>>();
  });

  it('coGroup: apply', () => {
    const coGroupWindow = bids
      .coGroup(persons)
      .where((b) => b.bidder)
      .equalTo((p) => p.name)
      .window(window);
    expectTypeOf(coGroupWindow).toEqualTypeOf<CoGroupWindow<Bid, Person, string>>();
    expectTypeOf(coGroupWindow.apply<number>((bs, ps, out) => out.collect(bs.length * ps.length))).toEqualTypeOf<SingleOutputStream<number>>();
  });
});

describe('async I/O', () => {
  it('ordered and unordered, with and without retries', () => {
    const lookup = (b: Bid, result: ResultFuture<string>): void => result.complete([b.bidder]);
    expectTypeOf(AsyncDataStream.orderedWait(bids, lookup, 1_000)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(AsyncDataStream.unorderedWait(bids, lookup, 1_000, 10)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(AsyncDataStream.orderedWaitWithRetry(bids, lookup, 1_000, 10, undefined)).toEqualTypeOf<SingleOutputStream<string>>();
    expectTypeOf(AsyncDataStream.unorderedWaitWithRetry(bids, { asyncInvoke: lookup }, 1_000, 10, undefined)).toEqualTypeOf<SingleOutputStream<string>>();
    // @ts-expect-error the function takes Bids, not Persons
    AsyncDataStream.orderedWait(persons, lookup, 1_000);
  });
});

describe('a sink of another type does not compile', () => {
  const prices = bids.map((b) => b.price);

  it('the built-in sinks', () => {
    prices.sinkTo(new PrintSink<number>());
    // @ts-expect-error a print sink of strings cannot take numbers
    prices.sinkTo(new PrintSink<string>());
    // @ts-expect-error
    prices.sinkTo(new CollectSink<string>());
    // @ts-expect-error
    prices.sinkTo(new DiscardingSink<Bid>());
    // @ts-expect-error
    prices.sinkTo(new FileSink<Bid>('out'));
    // @ts-expect-error
    prices.sinkTo(new ExactlyOnceFileSink<string>('out'));
    prices.sinkTo(new FileSink('out', { format: (n: number) => n.toFixed(2) }));
    // @ts-expect-error the format function takes the records
    prices.sinkTo(new FileSink('out', { format: (s: string) => s }));
    // A sink of a wider type takes the records.
    prices.sinkTo(new PrintSink<number | string>());
    prices.sinkTo(new DiscardingSink<unknown>());
  });

  it('Kafka and PostgreSQL sinks: their type is that of the functions that read the record', () => {
    const connection = { bootstrapServers: 'localhost:9092' } as const;
    bids.sinkTo(new KafkaSink({ ...connection, topic: 'out', key: (b: Bid) => b.bidder, valueSerializer: 'json' }));
    // @ts-expect-error a Kafka sink keyed by a Bid's field cannot take numbers
    prices.sinkTo(new KafkaSink({ ...connection, topic: 'out', key: (b: Bid) => b.bidder }));
    // @ts-expect-error
    prices.sinkTo(new KafkaSink<string>({ ...connection, topic: 'out' }));
    const upsert = new PostgresUpsertSink({ table: 'bids', row: { fields: { auction: (b: Bid) => b.auction, price: (b: Bid) => b.price } }, keyColumns: ['auction'] });
    bids.sinkTo(upsert);
    // @ts-expect-error an upsert sink of Bids cannot take numbers
    prices.sinkTo(upsert);
    // @ts-expect-error a key column must be a mapped column
    new PostgresUpsertSink({ table: 'bids', row: { fields: { auction: (b: Bid) => b.auction } }, keyColumns: ['bidder'] });
    const twoPhase = new PostgresTwoPhaseCommitSink({ table: 'bids', row: { columns: ['auction'], toRow: (b: Bid) => [b.auction] }, transactionalIdPrefix: 'bids' });
    // @ts-expect-error
    prices.sinkTo(twoPhase);
    const writeAhead = new PostgresWriteAheadSink({ table: 'bids', row: { columns: ['auction'], toRow: (b: Bid) => [b.auction] }, sinkId: 'bids' });
    // @ts-expect-error
    prices.sinkTo(writeAhead);
    bids.sinkTo(twoPhase);
    bids.sinkTo(writeAhead);
    expectTypeOf(kafkaDeadLetter<Bid>({ ...connection, topic: 'dlq' })).toEqualTypeOf<(record: Bid, error: Error) => Promise<void>>();
  });

  it('a sink of your own is checked by its write; nothing follows a sink', () => {
    const own: Sink<number> = { createWriter: () => ({ write: (n) => void n.toFixed() }) };
    prices.sinkTo(own);
    // @ts-expect-error a Sink<number> cannot take Bids
    bids.sinkTo(own);
    // @ts-expect-error a sink's result is not a stream
    prices.sinkTo(own).map((x: unknown) => x);
  });
});
