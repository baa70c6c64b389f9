/** Why a transaction could not be committed; thrown with an explanation. */
export class TransactionCommitError extends Error {
  override readonly name = 'TransactionCommitError';
}

