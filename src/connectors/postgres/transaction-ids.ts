/**
 * Names of the prepared transactions of the two-phase-commit sink, `<prefix>-<subtask>-<checkpointId>`,
 * and the pure decision which of them a starting subtask rolls back.
 */

/** PostgreSQL's limit on a prepared transaction's identifier (GIDSIZE - 1). */
export const GID_LENGTH_MAX = 199;

/** The suffix of the transaction a job without checkpointing commits at the end of its input. */
export const END_OF_INPUT_SUFFIX = 'final';

/** Longest subtask index (max parallelism 32 768) and checkpoint id (2^53) in characters. */
const SUBTASK_DIGITS_MAX = 5;
const CHECKPOINT_DIGITS_MAX = 16;

export const PREFIX_LENGTH_MAX = GID_LENGTH_MAX - 2 - SUBTASK_DIGITS_MAX - CHECKPOINT_DIGITS_MAX;

const PREFIX_CHARS = /^[A-Za-z0-9_.:-]+$/;

export function checkPrefix(prefix: string, what: string): void {
  if (typeof prefix !== 'string' || prefix.length === 0) throw new Error(`${what}: transactionalIdPrefix is required (one per job and sink: it names the prepared transactions)`);
  if (!PREFIX_CHARS.test(prefix)) throw new Error(`${what}: transactionalIdPrefix '${prefix}' may contain only letters, digits and _ . : -`);
  if (prefix.length > PREFIX_LENGTH_MAX) {
    throw new Error(`${what}: transactionalIdPrefix is ${prefix.length} characters; at most ${PREFIX_LENGTH_MAX}, so '<prefix>-<subtask>-<checkpointId>' stays within PostgreSQL's ${GID_LENGTH_MAX}-character limit`);
  }
}

export function transactionId(prefix: string, subtask: number, checkpointId: number | typeof END_OF_INPUT_SUFFIX): string {
  if (!Number.isInteger(subtask) || subtask < 0) throw new Error(`transaction id: subtask ${subtask} is not an index`);
  if (checkpointId !== END_OF_INPUT_SUFFIX && (!Number.isSafeInteger(checkpointId) || checkpointId < 1)) throw new Error(`transaction id: checkpoint id ${checkpointId} is not a positive integer`);
  const gid = `${prefix}-${subtask}-${checkpointId}`;
  if (gid.length > GID_LENGTH_MAX) throw new Error(`transaction id '${gid}' is longer than PostgreSQL's ${GID_LENGTH_MAX} characters`);
  return gid;
}

export interface ParsedTransactionId {
  readonly subtask: number;
  /** Undefined for the end-of-input transaction. */
  readonly checkpointId: number | undefined;
}

/** The parts of a gid of this prefix; undefined for any other gid (other prefixes, other software). */
export function parseTransactionId(prefix: string, gid: string): ParsedTransactionId | undefined {
  if (!gid.startsWith(`${prefix}-`)) return undefined;
  const m = /^(\d{1,5})-(\d{1,16}|final)$/.exec(gid.slice(prefix.length + 1));
  if (m === null) return undefined;
  return { subtask: Number(m[1]), checkpointId: m[2] === END_OF_INPUT_SUFFIX ? undefined : Number(m[2]) };
}

export interface LingeringDecisionInput {
  readonly prefix: string;
  /** Prepared transactions of this database whose gid starts with the prefix. */
  readonly prepared: readonly string[];
  readonly subtask: number;
  readonly parallelism: number;
  /** The subtask indexes and parallelism of the transactions in this subtask's restored state (empty on a fresh start). */
  readonly restoredSubtasks: readonly number[];
  readonly restoredParallelism: number | undefined;
  /** Gids this subtask commits from its restored state: never rolled back. */
  readonly keep: ReadonlySet<string>;
}

/**
 * Which prepared transactions of the prefix a starting subtask rolls back: those of the subtask
 * indexes it is responsible for that its restored state does not hold (prepared by an attempt
 * whose checkpoint never completed, or by an earlier run).
 *
 * Responsible: the old subtasks whose state it restored (the state of each old subtask goes to
 * exactly one new one, at any parallelism), and the indexes no restored state can name: `j`
 * with `j % parallelism == subtask` and `j` beyond both the old and the new parallelism. A
 * subtask without restored state is either in a fresh start or, after a scale-up, a new index
 * beyond the old parallelism: then every `j % parallelism == subtask` is its own.
 */
export function lingeringToRollBack(o: LingeringDecisionInput): string[] {
  const own = new Set(o.restoredSubtasks);
  const freeFrom = own.size === 0 ? 0 : Math.max(o.parallelism, o.restoredParallelism ?? 0);
  const responsible = (j: number): boolean => own.has(j) || (j >= freeFrom && j % o.parallelism === o.subtask);
  const out: string[] = [];
  for (const gid of o.prepared) {
    const p = parseTransactionId(o.prefix, gid);
    if (p === undefined || o.keep.has(gid) || !responsible(p.subtask)) continue;
    out.push(gid);
  }
  return out.sort();
}
