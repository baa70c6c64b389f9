/**
 * Enriches a stream with lookups in PostgreSQL, many queries under way at once (async I/O,
 * Flink's AsyncDataStream).
 *
 *   PGHOST=127.0.0.1 PGUSER=postgres PGDATABASE=test npx sluice run -p 2 examples/async-lookup.ts <table> [payments]
 *
 * The table maps accounts to their owners; the connection comes from the PG* variables:
 *
 *   CREATE TABLE accounts (id integer PRIMARY KEY, owner text NOT NULL);
 *
 * Payment i (i = 0 .. payments-1, default 1000) is `i` cents to account `i % 50`. Each subtask
 * keeps a pool of 4 connections and up to 50 queries under way (`unorderedWait`: a payment
 * goes out as soon as its owner is known). A query that fails is tried again twice, 100 ms
 * apart; one that takes longer than 5 s fails the job. A payment to an account that is not in
 * the table is dropped (the lookup gives no result). Prints `payment <i> account <a> owner <o>`.
 *
 * With checkpoints (`-D execution.checkpointing.interval=1s`), the payments whose queries are
 * under way at a checkpoint are part of it and are looked up again after a failure.
 */
import pg from 'pg';
import { AsyncDataStream, AsyncRetryStrategies, defineJob, RetryPredicates, type AsyncFunction, type ResultFuture } from 'sluice';
import { GeneratorSource, PrintSink } from 'sluice/connectors';

interface Payment {
  readonly id: number;
  readonly account: number;
  readonly cents: number;
}

class OwnerLookup implements AsyncFunction<Payment, string> {
  private pool: pg.Pool | undefined;

  constructor(private readonly table: string) {}

  open = (): void => {
    this.pool = new pg.Pool({ max: 4 });
  };

  async asyncInvoke(p: Payment, result: ResultFuture<string>): Promise<void> {
    const { rows } = await this.pool!.query<{ owner: string }>(`SELECT owner FROM ${pg.escapeIdentifier(this.table)} WHERE id = $1`, [p.account]);
    result.complete(rows.map((r) => `payment ${p.id} account ${p.account} owner ${r.owner}`));
  }

  close = async (): Promise<void> => {
    await this.pool?.end();
  };
}

export default defineJob((env, args) => {
  const [table, count = '1000'] = args;
  if (table === undefined) throw new Error('usage: sluice run examples/async-lookup.ts <table> [payments]');
  const payments = env.fromSource(
    new GeneratorSource<Payment>({ count: Number(count), generate: (i) => ({ id: i, account: i % 50, cents: i }) }),
    'payments',
  );
  const retry = AsyncRetryStrategies.fixedDelay<string>(2, 100).ifException(RetryPredicates.HAS_EXCEPTION_PREDICATE);
  AsyncDataStream.unorderedWaitWithRetry(payments, new OwnerLookup(table), 5_000, 50, retry)
    .uid('owner-lookup')
    .sinkTo(new PrintSink<string>());
});
