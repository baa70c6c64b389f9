import { NonRecoverableError } from '../../runtime/recovery/non-recoverable-error.js';

/**
 * A start-time check of the CDC source failed (wal_level, REPLICATION, slots, the slot's plugin,
 * the publication, REPLICA IDENTITY): the message names the setting and the fix. Fails the job
 * without restarts. Its own file: public, so it imports no client library.
 */
export class CdcSetupError extends NonRecoverableError {
  override name = 'CdcSetupError';
}
