import type { PreparedTransaction } from './kafka-types.js';

/**
 * Why the broker refused to commit a pre-committed transaction (EndTxn with its saved producer
 * id and epoch), for the error that fails the job. The error codes cannot tell the causes
 * apart: a transaction the broker timed out and one that another InitProducerId of the same
 * transactional id fenced both end aborted with a newer epoch. So all causes are named, the
 * ones that fit the codes first. Whatever the cause, the records are lost and restoring the
 * same checkpoint again fails the same way. A pure decision over the facts.
 */
export function explainUncommittableTransaction(txn: PreparedTransaction, errorIds: readonly string[], transactionTimeoutMs: number): string {
  const causes = [
    `a producer initialized the transactional id '${txn.transactionalId}' (InitProducerId) after this transaction was pre-committed, ` +
      `which fences and aborts it: another job or run writing with the same transactionalIdPrefix (it must be unique per job), ` +
      `a sink writer of an earlier attempt of this job still running (e.g. on a TaskManager cut off from the JobManager), ` +
      `or a run restored from an older checkpoint or savepoint that named its transactions the same`,
    `the broker aborted it because it stayed open longer than transaction.timeout.ms (${transactionTimeoutMs} ms) before its checkpoint ` +
      `completed and the job committed it (then raise transactionTimeoutMs, and the brokers' transaction.max.timeout.ms, above the longest checkpoint plus restart time)`,
  ];
  if (errorIds.includes('INVALID_PRODUCER_ID_MAPPING')) {
    causes.unshift(
      `the broker no longer knows the transactional id: it forgets an id transactional.id.expiration.ms (default 7 days) after its last use, ` +
        `so a checkpoint or savepoint that old cannot commit its transactions`,
    );
  }
  return (
    `kafka sink: transaction '${txn.transactionalId}' (producer id ${txn.producerId}, epoch ${txn.producerEpoch}) cannot be committed: ${errorIds.join(', ')}. ` +
    `The broker has ended it without a commit, so its records are lost; restoring the same checkpoint again cannot commit it. Possible causes: ` +
    causes.map((c, i) => `(${i + 1}) ${c}`).join('; ') +
    '.'
  );
}
