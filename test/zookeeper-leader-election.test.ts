import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaderElection } from '../src/cluster/ha/leader-election.js';
import { LeaderRetrieval } from '../src/cluster/ha/leader-retrieval.js';
import type { LeaderInfo } from '../src/cluster/ha/leader-info.js';
import type { ZooKeeperHaConfig } from '../src/cluster/ha/zookeeper-ha-config.js';
import { toLogger } from '../src/util/logger.js';
import { startZooKeeperServer, type ZooKeeperService } from './services/zookeeper-server.js';

/**
 * Leader election and leader retrieval against a real ZooKeeper server (3.9.5): one leader at
 * a time; a standby leads when the leader's session ends; a lost connection (the server
 * killed) revokes leadership at once, and the same session, connected again within the
 * session timeout, leads again; TaskManagers' retrieval follows every new leader.
 */

let zk: ZooKeeperService | undefined;
beforeAll(async () => {
  zk = await startZooKeeperServer();
}, 240_000);
afterAll(async () => {
  await zk?.close();
});

const log = toLogger(undefined, 'test');

function config(clusterPath: string, sessionTimeoutMs = 4000): ZooKeeperHaConfig {
  return { quorum: zk!.connectString, clusterPath, sessionTimeoutMs, connectionTimeoutMs: 10_000, retryWaitMs: 200, maxRetryAttempts: 3, tolerateSuspendedConnections: false };
}

/** A contender that records its grants and revokes. */
function contender(c: ZooKeeperHaConfig, name: string, port: number) {
  const events: string[] = [];
  let waiters: (() => void)[] = [];
  const changed = (e: string): void => {
    events.push(e);
    for (const w of waiters) w();
    waiters = [];
  };
  const election = new LeaderElection({
    config: c,
    contenderId: name,
    address: { rpcHost: '127.0.0.1', rpcPort: port, restUrl: `http://127.0.0.1:${port + 1}` },
    log,
    onGrant: (id) => changed(`grant ${id}`),
    onRevoke: (why) => changed(`revoke ${why}`),
  });
  /** Resolves once an event matching `re` has happened (counting from index `from`). */
  const until = async (re: RegExp, from = 0, timeoutMs = 20_000): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = events.slice(from).find((e) => re.test(e));
      if (hit !== undefined) return hit;
      if (Date.now() > deadline) throw new Error(`${name}: no ${re} within ${timeoutMs} ms; events: ${JSON.stringify(events)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  return { election, events, until };
}

describe('leader election on ZooKeeper', () => {
  it('one leader; the next leads when its session ends; retrieval follows; fenced ids differ per grant', async () => {
    const c = config('/flink/election-a');
    const a = contender(c, 'a', 7000);
    const b = contender(c, 'b', 7100);
    const seen: (LeaderInfo | undefined)[] = [];
    const retrieval = new LeaderRetrieval({ config: c, log, onLeader: (l) => seen.push(l) });
    try {
      await a.election.start();
      await a.until(/^grant /);
      await b.election.start();
      retrieval.start();
      const deadline = Date.now() + 10_000;
      while (seen.at(-1)?.rpcPort !== 7000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(seen.at(-1)?.rpcPort).toBe(7000);
      expect(b.events).toEqual([]);
      expect(b.election.leading).toBeUndefined();
      const firstSession = a.election.leading!;
      // The leader's session ends (closed): b leads, with another leader session id.
      a.election.stop();
      const grant = await b.until(/^grant /);
      expect(grant).not.toContain(firstSession);
      const later = Date.now() + 10_000;
      while (seen.at(-1)?.rpcPort !== 7100 && Date.now() < later) await new Promise((r) => setTimeout(r, 50));
      expect(seen.at(-1)).toMatchObject({ rpcPort: 7100, leaderSessionId: b.election.leading });
    } finally {
      retrieval.stop();
      a.election.stop();
      b.election.stop();
    }
  }, 60_000);

  it('a lost connection revokes at once; the same session connected again leads again (suspended, not lost)', async () => {
    const c = config('/flink/election-b', 8000);
    const a = contender(c, 'a', 7200);
    try {
      await a.election.start();
      await a.until(/^grant /);
      const server = zk!.servers[0]!;
      const n = a.events.length;
      await server.kill();
      // The client notices the closed connection: leadership goes before the session could expire.
      await a.until(/^revoke .*suspended/, n);
      await server.start();
      // Within the session timeout: the same session (its latch node still there) leads again.
      await a.until(/^grant /, n);
      expect(a.events.slice(n).filter((e) => e.startsWith('revoke'))).toHaveLength(1);
    } finally {
      a.election.stop();
    }
  }, 60_000);

  it('a server that stops answering (connection open) is noticed within the session timeout: leadership goes, and comes back with the session', async () => {
    const c = config('/flink/election-c', 6000);
    const a = contender(c, 'a', 7300);
    const server = zk!.servers[0]!;
    try {
      await a.election.start();
      await a.until(/^grant /);
      const n = a.events.length;
      const frozenAt = Date.now();
      server.freeze();
      // node-zookeeper-client alone never notices (it sends pings, reads no timeout): ZooKeeperConnection's probe does.
      await a.until(/^revoke .*suspended/, n, 15_000);
      const noticedMs = Date.now() - frozenAt;
      server.thaw();
      await a.until(/^grant /, n + 1, 15_000);
      console.log(`a frozen ZooKeeper server noticed after ${noticedMs} ms (session timeout 6000 ms)`);
      // Before the servers could expire the session (the Java client's read timeout is two thirds of it).
      expect(noticedMs).toBeLessThan(6000);
    } finally {
      server.thaw();
      a.election.stop();
    }
  }, 60_000);

  it('a connection lost for longer than the session timeout is a lost session: a new one contends and leads', async () => {
    const c = config('/flink/election-d', 3000);
    const a = contender(c, 'a', 7400);
    const server = zk!.servers[0]!;
    try {
      await a.election.start();
      const first = await a.until(/^grant /);
      const n = a.events.length;
      await server.kill();
      await a.until(/^revoke .*suspended/, n);
      // Down past the session timeout: the client says nothing, ZooKeeperConnection says lost.
      await new Promise((r) => setTimeout(r, 4000));
      await server.start();
      const again = await a.until(/^grant /, n + 1, 30_000);
      expect(again).not.toBe(first);
    } finally {
      a.election.stop();
    }
  }, 60_000);
});
