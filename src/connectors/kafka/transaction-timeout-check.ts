export interface TransactionTimeoutFacts {
  /** The sink's `transaction.timeout.ms`. */
  readonly transactionTimeoutMs: number;
  /** The smallest `transaction.max.timeout.ms` of the brokers, when they tell. */
  readonly brokerMaxTimeoutMs: number | undefined;
  /** `execution.checkpointing.timeout` of the job, when it checkpoints. */
  readonly checkpointTimeoutMs: number | undefined;
  /** The longest delay of the job's restart strategy. */
  readonly restartDelayMsMax: number | undefined;
}

/**
 * Whether an exactly-once Kafka sink can work with these timeouts; the explanation when it
 * cannot. A transaction stays open from the barrier before it to the completion of the
 * checkpoint after it, and after a failure until the restarted job commits it: if the broker
 * aborts it first (transaction.timeout.ms), its records are lost. A pure decision.
 */
export function checkTransactionTimeout(f: TransactionTimeoutFacts): string | undefined {
  if (!(f.transactionTimeoutMs > 0)) return `kafka sink: transactionTimeoutMs must be > 0, got ${f.transactionTimeoutMs}`;
  if (f.brokerMaxTimeoutMs !== undefined && f.transactionTimeoutMs > f.brokerMaxTimeoutMs) {
    return (
      `kafka sink: transactionTimeoutMs (transaction.timeout.ms) is ${f.transactionTimeoutMs} ms, more than the broker allows ` +
      `(transaction.max.timeout.ms = ${f.brokerMaxTimeoutMs} ms), so the broker would refuse every transaction. ` +
      `Lower transactionTimeoutMs, or raise transaction.max.timeout.ms in the brokers' server.properties.`
    );
  }
  if (f.checkpointTimeoutMs !== undefined) {
    const needed = f.checkpointTimeoutMs + (f.restartDelayMsMax ?? 0);
    if (f.transactionTimeoutMs <= needed) {
      return (
        `kafka sink: transactionTimeoutMs (transaction.timeout.ms) is ${f.transactionTimeoutMs} ms, but a transaction may have to stay open ` +
        `for the checkpoint timeout (execution.checkpointing.timeout = ${f.checkpointTimeoutMs} ms) plus the longest restart delay ` +
        `(${f.restartDelayMsMax ?? 0} ms) = ${needed} ms: the broker would abort pre-committed transactions before the job commits them, ` +
        `and their records would be lost. Raise transactionTimeoutMs above ${needed} ms (within the brokers' transaction.max.timeout.ms), ` +
        `or lower execution.checkpointing.timeout or the restart delay.`
      );
    }
  }
  return undefined;
}
