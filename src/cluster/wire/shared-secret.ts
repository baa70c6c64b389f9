import { createHmac, timingSafeEqual } from 'node:crypto';

/** Proof that a peer knows the cluster's shared secret (`cluster.secret`): an HMAC of what it says. */
export function proof(secret: string | undefined, statement: string): string {
  return secret === undefined ? '' : createHmac('sha256', secret).update(statement).digest('hex');
}

export function checkProof(secret: string | undefined, statement: string, given: unknown): boolean {
  if (secret === undefined) return true;
  if (typeof given !== 'string') return false;
  const want = Buffer.from(proof(secret, statement), 'hex');
  const got = Buffer.from(given, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}
