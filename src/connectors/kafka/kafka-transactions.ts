import { isRetriable, kafkaErrorIds, type KafkaCluster } from './kafka-cluster.js';
import { kafka } from './kafka-protocol.js';
import type { PreparedTransaction } from './kafka-types.js';
import { TransactionCommitError } from './transaction-commit-error.js';
import { explainUncommittableTransaction } from './uncommittable-transaction.js';

export { TransactionCommitError, type PreparedTransaction };

export interface ProducerIdentity {
  readonly transactionalId: string;
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

/** `<prefix>-<subtask>-<checkpointId>`: the transactional id of a subtask's transaction that the checkpoint `checkpointId` (or a later one) pre-commits. */
export function transactionalIdOf(prefix: string, subtask: number, checkpointId: number): string {
  return `${prefix}-${subtask}-${checkpointId}`;
}

/** Parses `<prefix>-<subtask>-<checkpointId>`; undefined for ids of other prefixes. */
export function parseTransactionalId(prefix: string, id: string): { subtask: number; checkpointId: number } | undefined {
  if (!id.startsWith(`${prefix}-`)) return undefined;
  const m = /^(\d+)-(\d+)$/.exec(id.slice(prefix.length + 1));
  if (m === null) return undefined;
  return { subtask: Number(m[1]), checkpointId: Number(m[2]) };
}

/**
 * InitProducerId for a transactional id: fences earlier producers of the id and aborts the
 * transaction they left open; returns the producer id and epoch to write with.
 */
export async function initTransactionalProducer(cluster: KafkaCluster, transactionalId: string, transactionTimeoutMs: number): Promise<ProducerIdentity> {
  const r = await cluster.retrying(`InitProducerId for transactional id '${transactionalId}'`, async (deadline) => {
    const coordinator = await cluster.coordinator('transaction', transactionalId, deadline);
    return (await kafka()).initProducerIdV5.api.async(coordinator, transactionalId, transactionTimeoutMs, -1n, -1);
  });
  return { transactionalId, producerId: r.producerId, producerEpoch: r.producerEpoch };
}

/**
 * EndTxn with the saved producer id and epoch: commits (or aborts) a transaction without
 * InitProducerId, so it also works from another process after a crash. Committing a
 * transaction that was committed already succeeds (the coordinator treats it as a retry).
 */
export async function endTransaction(cluster: KafkaCluster, txn: PreparedTransaction, commit: boolean, transactionTimeoutMs: number): Promise<void> {
  const producerId = BigInt(txn.producerId);
  try {
    await cluster.retrying(`EndTxn(${commit ? 'commit' : 'abort'}) of transactional id '${txn.transactionalId}'`, async (deadline) => {
      const coordinator = await cluster.coordinator('transaction', txn.transactionalId, deadline);
      await (await kafka()).endTxnV4.api.async(coordinator, txn.transactionalId, producerId, txn.producerEpoch, commit);
    });
  } catch (e) {
    const ids = kafkaErrorIds(e);
    if (!commit) {
      // Aborting what is gone or fenced already is done.
      if (ids.some((id) => ['INVALID_PRODUCER_ID_MAPPING', 'INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'INVALID_TXN_STATE'].includes(id))) return;
      throw e;
    }
    if (ids.some((id) => ['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'INVALID_TXN_STATE', 'INVALID_PRODUCER_ID_MAPPING'].includes(id))) {
      throw new TransactionCommitError(explainUncommittableTransaction(txn, ids, transactionTimeoutMs), { cause: e });
    }
    throw e;
  }
}

/** The smallest `transaction.max.timeout.ms` of the cluster's brokers (DescribeConfigs), or undefined when no broker tells. */
export async function brokerTransactionMaxTimeoutMs(cluster: KafkaCluster): Promise<number | undefined> {
  const metadata = await cluster.refreshMetadata([]);
  let min: number | undefined;
  for (const b of metadata.brokers) {
    const r = await cluster.retrying(`DescribeConfigs of broker ${b.nodeId}`, async (deadline) =>
      (await kafka()).describeConfigsV4.api.async(
        await cluster.connectionTo(b.nodeId, deadline),
        [{ resourceType: (await kafka()).ConfigResourceTypes.BROKER, resourceName: String(b.nodeId), configurationKeys: ['transaction.max.timeout.ms'] }],
        false,
        false,
      ),
    );
    for (const result of r.results) {
      const v = result.configs.find((c) => c.name === 'transaction.max.timeout.ms')?.value;
      if (v !== null && v !== undefined && Number.isFinite(Number(v))) min = Math.min(min ?? Infinity, Number(v));
    }
  }
  return min;
}

export interface LingeringScope {
  readonly prefix: string;
  readonly subtask: number;
  readonly parallelism: number;
  /** The checkpoint restored from (0 on a fresh start): transactions named after it were never part of a completed checkpoint. */
  readonly restoredCheckpointId: number;
  readonly transactionTimeoutMs: number;
}

/**
 * Which open transactions this subtask aborts on start: those of its prefix named after the
 * restored checkpoint, whose subtask number maps to this subtask (`n % parallelism`, so
 * subtasks of a larger earlier parallelism are covered too). A pure decision over the listed
 * open transactional ids.
 */
export function lingeringToAbort(openIds: readonly string[], scope: Omit<LingeringScope, 'transactionTimeoutMs'>): string[] {
  const out: string[] = [];
  for (const id of openIds) {
    const parsed = parseTransactionalId(scope.prefix, id);
    if (parsed === undefined) continue;
    if (parsed.checkpointId <= scope.restoredCheckpointId) continue;
    if (parsed.subtask % scope.parallelism !== scope.subtask) continue;
    out.push(id);
  }
  return out.sort();
}

/**
 * Aborts the transactions a failed earlier run of this subtask left open (so read_committed
 * readers are not held back until they time out): lists the open transactions of every broker
 * (ListTransactions) and fences each lingering one with InitProducerId, which aborts it. Also
 * probes `<prefix>-<subtask>-<restored+1>`, `<restored+2>`, ... with InitProducerId until an
 * id was never used (epoch 0), as Flink does, for brokers that do not list transactions.
 * Returns the aborted ids.
 */
export async function abortLingeringTransactions(cluster: KafkaCluster, scope: LingeringScope): Promise<string[]> {
  const open = new Set<string>();
  let listed = true;
  try {
    const metadata = await cluster.refreshMetadata([]);
    for (const b of metadata.brokers) {
      const r = await cluster.retrying(`ListTransactions on broker ${b.nodeId}`, async (deadline) => (await kafka()).listTransactionsV1.api.async(await cluster.connectionTo(b.nodeId, deadline), [], [], -1n, null));
      for (const t of r.transactionStates) if (t.transactionState === 'Ongoing' || t.transactionState === 'PrepareAbort') open.add(t.transactionalId);
    }
  } catch (e) {
    if (isRetriable(e)) throw e;
    listed = false; // e.g. not authorized to list: probing below still finds consecutive ids
  }
  const aborted = new Set<string>();
  for (const id of lingeringToAbort([...open], scope)) {
    await initTransactionalProducer(cluster, id, scope.transactionTimeoutMs);
    aborted.add(id);
  }
  if (!listed) {
    for (let cp = scope.restoredCheckpointId + 1; ; cp++) {
      const id = transactionalIdOf(scope.prefix, scope.subtask, cp);
      const p = await initTransactionalProducer(cluster, id, scope.transactionTimeoutMs);
      if (p.producerEpoch === 0) break;
      aborted.add(id);
    }
  }
  return [...aborted];
}
