/**
 * Kafka -> keyed aggregation -> PostgreSQL, exactly-once end to end.
 *
 *   npx sluice run examples/kafka-to-postgres.ts <bootstrap> <input-topic> <table> [bounded]
 *   PGHOST=127.0.0.1 PGUSER=postgres PGDATABASE=test npx sluice run -p 2 examples/kafka-to-postgres.ts 127.0.0.1:9092 payments account_totals
 *
 * Reads records `account,amount` from the input topic (read_committed), keeps a running total
 * per account in checkpointed keyed state, and upserts `(account, total, payments)` rows into
 * the table with the two-phase-commit sink: each subtask writes the rows of a checkpoint
 * interval in one PostgreSQL transaction, `PREPARE TRANSACTION`s it at the checkpoint barrier
 * and `COMMIT PREPARED`s it when the checkpoint completes (again after a restore, if the job
 * failed in between). Readers see each checkpoint's rows at once or not at all.
 *
 * The server needs `max_prepared_transactions` > 0 (`ALTER SYSTEM SET
 * max_prepared_transactions = 20;` then restart it); the connection comes from the PG*
 * variables. The table must exist:
 *
 *   CREATE TABLE account_totals (account text PRIMARY KEY, total double precision NOT NULL, payments integer NOT NULL);
 *
 * With `bounded` the job stops at the input's end offsets at start (otherwise it runs until
 * cancelled). Rows PostgreSQL refuses (a constraint violation, say) would fail the job naming
 * the record; here they are logged to stderr through the `deadLetter` option instead.
 */
import { defineJob, valueState, type Collector, type KeyedProcessContext, type KeyedProcessFunction, type KeyedRuntimeContext, type ValueState } from 'sluice';
import { KafkaSource, PostgresTwoPhaseCommitSink } from 'sluice/connectors';

interface Payment {
  readonly account: string;
  readonly amount: number;
}

interface Total {
  readonly account: string;
  readonly total: number;
  readonly payments: number;
}

function parsePayment(line: string): Payment {
  const [account = '', amount = '0'] = line.split(',');
  const n = Number(amount);
  return { account: account.trim(), amount: Number.isFinite(n) ? n : 0 };
}

class RunningTotal implements KeyedProcessFunction<string, Payment, Total> {
  private state!: ValueState<{ total: number; payments: number }>;
  open(ctx: KeyedRuntimeContext<string>): void {
    this.state = ctx.getState(valueState<{ total: number; payments: number }>('total'));
  }
  processElement(p: Payment, ctx: KeyedProcessContext<string>, out: Collector<Total>): void {
    const s = this.state.value() ?? { total: 0, payments: 0 };
    const next = { total: s.total + p.amount, payments: s.payments + 1 };
    this.state.update(next);
    out.collect({ account: ctx.getCurrentKey(), ...next });
  }
}

export default defineJob((env, args) => {
  const [bootstrap, input, table, bounded] = args;
  if (bootstrap === undefined || input === undefined || table === undefined) {
    throw new Error('usage: sluice run examples/kafka-to-postgres.ts <bootstrap> <input-topic> <table> [bounded]');
  }
  env.enableCheckpointing(1000, 'EXACTLY_ONCE');
  env
    .fromSource(
      new KafkaSource<string>({ bootstrapServers: bootstrap, topics: input, ...(bounded === 'bounded' ? { stoppingOffsets: 'latest' as const } : {}) }),
      'payments',
    )
    .uid('payments')
    .map(parsePayment)
    .keyBy((p) => p.account)
    .process(new RunningTotal())
    .uid('totals')
    .sinkTo(
      new PostgresTwoPhaseCommitSink<Total, 'account' | 'total' | 'payments'>({
        table,
        row: { fields: { account: (t) => t.account, total: (t) => t.total, payments: (t) => t.payments } },
        // Upsert on the key: the latest total of an account wins within and across transactions.
        keyColumns: ['account'],
        // Names the prepared transactions `<prefix>-<subtask>-<checkpoint>`: unique to this job and sink.
        transactionalIdPrefix: `totals-${table}`,
        deadLetter: (t, e) => void process.stderr.write(`dead letter: ${JSON.stringify(t)}: ${e.message}\n`),
      }),
    )
    .uid('totals-out');
});
