import type { ConnectionState } from './zookeeper-connection.js';

/**
 * The leader latch's decisions (Curator's LeaderLatch), pure: a contender creates an
 * ephemeral sequential node under the latch; the one whose node has the lowest sequence
 * number leads, each of the others watches the node just before its own.
 */

/** The sequence number ZooKeeper appended to a sequential node's name (`latch-0000000042` -> 42). */
export function sequenceOf(name: string): number {
  const m = /(\d{10})$/.exec(name);
  if (m === null) throw new Error(`'${name}' is not a sequential node's name (no 10-digit suffix)`);
  return Number(m[1]);
}

/** Where `mine` stands among the latch's children: first (it leads), the one to watch, or gone (its session lost it). */
export type LatchPosition = { readonly kind: 'first' } | { readonly kind: 'behind'; readonly predecessor: string } | { readonly kind: 'gone' };

export function latchPosition(children: readonly string[], mine: string): LatchPosition {
  const sorted = children.filter((c) => /\d{10}$/.test(c)).sort((a, b) => sequenceOf(a) - sequenceOf(b));
  const at = sorted.indexOf(mine);
  if (at < 0) return { kind: 'gone' };
  if (at === 0) return { kind: 'first' };
  return { kind: 'behind', predecessor: sorted[at - 1]! };
}

/**
 * Whether a contender may act as leader: its latch node is first and its session is
 * connected; while the connection is suspended only if it tolerates suspended connections
 * (high-availability.zookeeper.client.tolerate-suspended-connections); never once the session
 * is lost.
 */
export function mayLead(o: { readonly first: boolean; readonly connection: ConnectionState; readonly tolerateSuspended: boolean }): boolean {
  if (!o.first) return false;
  if (o.connection === 'connected') return true;
  if (o.connection === 'suspended') return o.tolerateSuspended;
  return false;
}
