import { describe, expect, it } from 'vitest';
import { explainUncommittableTransaction } from './uncommittable-transaction.js';

const txn = { transactionalId: 'out-1-1', producerId: '1', producerEpoch: 4 };

describe('explainUncommittableTransaction', () => {
  it('PRODUCER_FENCED: names a later InitProducerId of the id (other job, earlier attempt, older checkpoint) and the timeout, without guessing one', () => {
    const m = explainUncommittableTransaction(txn, ['PRODUCER_FENCED'], 900_000);
    expect(m).toContain("transaction 'out-1-1' (producer id 1, epoch 4) cannot be committed: PRODUCER_FENCED");
    expect(m).toContain("(1) a producer initialized the transactional id 'out-1-1' (InitProducerId) after this transaction was pre-committed");
    expect(m).toMatch(/same transactionalIdPrefix.*earlier attempt of this job still running.*older checkpoint or savepoint/);
    expect(m).toContain('(2) the broker aborted it because it stayed open longer than transaction.timeout.ms (900000 ms)');
    expect(m).toContain('restoring the same checkpoint again cannot commit it');
    expect(m).not.toMatch(/most likely/);
    expect(m).not.toContain('transactional.id.expiration.ms');
  });

  it('INVALID_PRODUCER_ID_MAPPING: the expired transactional id comes first', () => {
    const m = explainUncommittableTransaction(txn, ['INVALID_PRODUCER_ID_MAPPING'], 60_000);
    expect(m).toMatch(/\(1\) the broker no longer knows the transactional id: .*transactional\.id\.expiration\.ms/);
    expect(m).toMatch(/\(2\) a producer initialized the transactional id/);
    expect(m).toMatch(/\(3\) the broker aborted it .*\(60000 ms\)/);
  });
});
