/**
 * Kafka -> keyed aggregation -> Kafka, exactly-once end to end.
 *
 *   npx sluice run examples/kafka-to-kafka.ts <bootstrap> <input-topic> <output-topic> [bounded]
 *   npx sluice run -p 2 -D execution.checkpointing.dir=/tmp/checkpoints examples/kafka-to-kafka.ts 127.0.0.1:9092 payments totals
 *
 * Reads records `account,amount` from the input topic (read_committed), keeps a running total
 * per account in checkpointed keyed state, and writes `account,total` to the output topic
 * (keyed by account) inside Kafka transactions: one per subtask and checkpoint, committed when
 * the checkpoint completes. After a failure the job restarts from the latest checkpoint: the
 * source rewinds to the offsets stored in it, the totals come back from it, transactions
 * pre-committed for a completed checkpoint are committed and the ones left open are aborted.
 * A consumer with isolation.level=read_committed sees every total exactly once; it sees
 * records about one checkpoint interval (here 1 s) after they were read.
 *
 * Both topics must exist. With `bounded` the job stops at the input's end offsets at start
 * (otherwise it runs until cancelled). An amount that is not a number counts as 0 (see the
 * `deadLetter` option in docs/connectors.md for sending bad records aside instead).
 */
import { defineJob, valueState, type Collector, type KeyedProcessContext, type KeyedProcessFunction, type KeyedRuntimeContext, type ValueState } from 'sluice';
import { KafkaSink, KafkaSource } from 'sluice/connectors';

interface Payment {
  readonly account: string;
  readonly amount: number;
}

function parsePayment(line: string): Payment {
  const [account = '', amount = '0'] = line.split(',');
  const n = Number(amount);
  return { account: account.trim(), amount: Number.isFinite(n) ? n : 0 };
}

/** The running total of an account, in keyed state (restored from the checkpoint after a failure). */
class RunningTotal implements KeyedProcessFunction<string, Payment, string> {
  private total!: ValueState<number>;
  open(ctx: KeyedRuntimeContext<string>): void {
    this.total = ctx.getState(valueState<number>('total'));
  }
  processElement(p: Payment, ctx: KeyedProcessContext<string>, out: Collector<string>): void {
    const t = (this.total.value() ?? 0) + p.amount;
    this.total.update(t);
    out.collect(`${ctx.getCurrentKey()},${t}`);
  }
}

export default defineJob((env, args) => {
  const [bootstrap, input, output, bounded] = args;
  if (bootstrap === undefined || input === undefined || output === undefined) {
    throw new Error('usage: sluice run examples/kafka-to-kafka.ts <bootstrap> <input-topic> <output-topic> [bounded]');
  }
  // Exactly-once needs checkpoints: the sink commits its transactions when one completes.
  env.enableCheckpointing(1000, 'EXACTLY_ONCE');
  env
    .fromSource(
      new KafkaSource<string>({
        bootstrapServers: bootstrap,
        topics: input,
        groupId: `${output}-totals`, // offsets are committed back for monitoring only; the checkpoint holds the real ones
        startingOffsets: 'earliest',
        isolationLevel: 'read_committed',
        ...(bounded === 'bounded' ? { stoppingOffsets: 'latest' as const } : {}),
      }),
      'payments',
    )
    .uid('payments')
    .map(parsePayment)
    .keyBy((p) => p.account)
    .process(new RunningTotal())
    .uid('totals')
    .sinkTo(
      new KafkaSink<string, string>({
        bootstrapServers: bootstrap,
        topic: output,
        key: (line) => line.slice(0, line.indexOf(',')),
        deliveryGuarantee: 'exactly-once',
        // Unique to this job among the jobs writing to the cluster: transactional ids are `<prefix>-<subtask>-<checkpoint>`.
        transactionalIdPrefix: `totals-${output}`,
        // Must be at most the brokers' transaction.max.timeout.ms (default 15 min) and more than the
        // checkpoint timeout plus the longest restart delay (checked when the job starts).
        transactionTimeoutMs: 900_000,
      }),
    )
    .uid('totals-out');
});
