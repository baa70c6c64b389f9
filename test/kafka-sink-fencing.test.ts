import { describe, expect, inject, it, vi } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import type { Sink, SinkWriter } from '../src/api/sink.js';
import type { Source } from '../src/api/source.js';
import { numberSource } from '../src/connectors/generator/sources.js';
import { KafkaSink } from '../src/connectors/kafka/kafka-sink.js';
import { CountPerKey, countReference } from './support/counting-job.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { readTopicWithJavaConsumer } from './services/kafka-broker.js';
import { createTopics, uniqueTopic } from './services/kafka-test-client.js';
import { collectingReaderOutput } from '../src/testing/reader-output.js';

/**
 * The interleaving behind a job that could never recover: a failed attempt's sink writer was
 * still opening its transaction (InitProducerId of `<prefix>-0-1`, first after a fresh start)
 * when the next attempt, also from scratch, opened, filled and pre-committed its own transaction
 * of that same id, and its checkpoint completed. The old writer's InitProducerId then landed and
 * fenced it: every restore of that checkpoint got PRODUCER_FENCED committing it. Here the old
 * writer's InitProducerId is held (the mocked function below) until the next attempt has
 * pre-committed, if the runtime lets that attempt start at all before the old one closed.
 */
const held = vi.hoisted(() => {
  const s = {
    /**
     * The first InitProducerId of an id with this prefix (subtask 0's transactions) is held: the
     * first attempt's first transaction, `<prefix>-0-1`, or `-0-2` when checkpoint 1 came before
     * any record reached the sink (a loaded machine), and so on. Until 2026-12-07 only `-0-1`
     * was held, and such a run waited for it forever.
     */
    prefix: undefined as string | undefined,
    release: () => {},
    released: undefined as Promise<void> | undefined,
    /** Resolves when the held InitProducerId got its answer. */
    done: undefined as Promise<void> | undefined,
    /** What happened to the held call, with times (printed when the test fails). */
    events: [] as string[],
  };
  s.released = new Promise<void>((r) => (s.release = r));
  return s;
});

vi.mock(import('../src/connectors/kafka/kafka-transactions.js'), async (importOriginal) => {
  const original = await importOriginal();
  return {
    ...original,
    initTransactionalProducer: (cluster, transactionalId, transactionTimeoutMs) => {
      if (held.prefix === undefined || !transactionalId.startsWith(held.prefix) || held.done !== undefined) {
        return original.initTransactionalProducer(cluster, transactionalId, transactionTimeoutMs);
      }
      // Long enough that without the fix the next attempt pre-commits meanwhile; short enough
      // for the test when the runtime rightly waits for this writer to close.
      held.events.push(`${new Date().toISOString()} InitProducerId of ${transactionalId} held`);
      setTimeout(() => held.release(), 2_000);
      const p = held.released!.then(() => {
        held.events.push(`${new Date().toISOString()} InitProducerId of ${transactionalId} released`);
        return original.initTransactionalProducer(cluster, transactionalId, transactionTimeoutMs);
      });
      held.done = p.then(
        () => void held.events.push(`${new Date().toISOString()} InitProducerId of ${transactionalId} answered`),
        (e: unknown) => void held.events.push(`${new Date().toISOString()} InitProducerId of ${transactionalId} failed: ${(e as Error).message}`),
      );
      return p;
    },
  };
});

const brokers = inject('kafka');
const KEYS = 5;

/** The sink, except that a later attempt's first pre-commit with records lets the held InitProducerId go and waits for its answer. */
function releasingAtPreCommit<T>(inner: Sink<T>): Sink<T> {
  return {
    createWriter: async (ctx, restored) => {
      // Where a run that times out waited (printed with the held call's events).
      held.events.push(`${new Date().toISOString()} attempt ${ctx.attemptNumber}: creating the sink writer`);
      const w = await inner.createWriter(ctx, restored);
      held.events.push(`${new Date().toISOString()} attempt ${ctx.attemptNumber}: sink writer created`);
      let wrote = false;
      const out: SinkWriter<T> = {
        write: (v, t) => {
          if (!wrote) held.events.push(`${new Date().toISOString()} attempt ${ctx.attemptNumber}: first record written`);
          wrote = true;
          return w.write(v, t);
        },
        prepareCommit: async (id) => {
          await w.prepareCommit?.(id);
          if (ctx.attemptNumber > 0 && wrote && held.done !== undefined) {
            held.release();
            await held.done;
          }
        },
        snapshotState: (id) => w.snapshotState?.(id) ?? [],
        notifyCheckpointComplete: (id) => w.notifyCheckpointComplete?.(id),
        close: () => w.close?.(),
      };
      return out;
    },
  };
}

/**
 * The source, except that the first attempt stops after `holdAfter` records until the old
 * writer has asked for its held InitProducerId: the job cannot end, with every record in the
 * first transaction, before the interleaving under test has begun, however slow the broker.
 */
function holdingUntilTheSinkOpens<T, S>(inner: Source<T, S>, holdAfter: number): Source<T, S> {
  return {
    boundedness: inner.boundedness,
    createSplits: (p) => inner.createSplits(p),
    ...(inner.assignSplit === undefined ? {} : { assignSplit: (s: S, i: number, p: number) => inner.assignSplit!(s, i, p) }),
    createReader: (ctx) => {
      const r = inner.createReader(ctx);
      let emitted = 0;
      const holding = () => ctx.attemptNumber === 0 && emitted >= holdAfter && held.done === undefined;
      return {
        ...(r.start === undefined ? {} : { start: () => r.start!() }),
        addSplits: (s) => r.addSplits(s),
        noMoreSplits: () => r.noMoreSplits(),
        pollNext: (out) => {
          if (holding()) return 'nothing';
          return r.pollNext(
            collectingReaderOutput((v, t) => {
              emitted++;
              out.collect(v, t);
            }),
          );
        },
        isAvailable: () => (holding() ? new Promise<void>((resolve) => setTimeout(resolve, 5)) : r.isAvailable()),
        snapshotState: (id) => r.snapshotState(id),
        ...(r.notifyCheckpointComplete === undefined ? {} : { notifyCheckpointComplete: (id: number) => r.notifyCheckpointComplete!(id) }),
        ...(r.close === undefined ? {} : { close: () => r.close!() }),
      };
    },
  };
}

describe('Kafka sink: a failed attempt cannot fence the next attempt', () => {
  it("an old writer's late InitProducerId does not abort the next attempt's pre-committed transaction: the read_committed output equals the reference", async ({ onTestFailed }) => {
    const records = 600;
    const started = Date.now();
    const logs: string[] = [];
    const step = (what: string) => logs.push(`+${Date.now() - started} ms test: ${what}`);
    // A timeout says nothing of where the test waited: the steps and the job's log do.
    onTestFailed(() => console.error(`kafka-sink-fencing, log of the failed run (started ${new Date(started).toISOString()}):\n${logs.join('\n')}\n${held.events.join('\n')}`));
    const topic = uniqueTopic('fence');
    await createTopics(brokers.bootstrap, [{ name: topic, partitions: 2 }]);
    held.prefix = `${topic}-0-`;
    // Attempt 0 fails once its sink writer waits for the held InitProducerId.
    let attempt = 0;
    const env = StreamExecutionEnvironment.create({
      'parallelism.default': 1,
      'execution.checkpointing.interval': 50,
      'restart-strategy.type': 'fixed-delay',
      'restart-strategy.fixed-delay.attempts': 4,
      'restart-strategy.fixed-delay.delay': 10,
    });
    env
      .fromSource(holdingUntilTheSinkOpens(numberSource({ count: records, eventsPerSecond: 1_000 }), records / 2), 'numbers')
      .process<number>({
        open: (ctx) => {
          attempt = ctx.attemptNumber;
        },
        processElement: (n, _ctx, out) => {
          if (attempt === 0 && held.done !== undefined) throw new Error('injected failure while the sink opens its transaction');
          out.collect(n);
        },
      })
      .keyBy((n) => n % KEYS)
      .process(new CountPerKey())
      .uid('count')
      .sinkTo(
        releasingAtPreCommit(
          new KafkaSink<string, string>({
            bootstrapServers: brokers.bootstrap,
            topic,
            deliveryGuarantee: 'exactly-once',
            transactionalIdPrefix: topic,
            key: (s) => s.split(':')[0]!,
            log: (m) => logs.push(m),
          }),
        ),
      )
      .uid('kafka-out');
    step('job submitted');
    const result = await env.executeAsync(undefined, { log: (m) => logs.push(`+${Date.now() - started} ms ${m}`) }).result.catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${logs.join('\n')}`);
    });
    expect(held.done, 'the old writer opened its transaction').toBeDefined();
    expect(result.numRestarts, logs.join('\n')).toBe(1);
    step('job finished; reading the topic with the Java console consumer');
    const committed = await readTopicWithJavaConsumer(brokers.bootstrap, topic);
    step(`read ${committed.length} records`);
    expect(compareMultisets(committed, countReference(records, KEYS))).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
  });
});
