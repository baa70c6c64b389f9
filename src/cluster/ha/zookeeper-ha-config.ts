import { posix } from 'node:path';
import { ConfigError, type Configuration } from '../../config/configuration.js';

/** The ZooKeeper high-availability settings of a cluster (high-availability.* options). */
export interface ZooKeeperHaConfig {
  /** host:port,host:port,... */
  readonly quorum: string;
  /** The cluster's node: path.root joined with cluster-id (`/flink/default`). */
  readonly clusterPath: string;
  readonly sessionTimeoutMs: number;
  readonly connectionTimeoutMs: number;
  readonly retryWaitMs: number;
  readonly maxRetryAttempts: number;
  readonly tolerateSuspendedConnections: boolean;
}

/**
 * The cluster's ZooKeeper layout (Flink's, in spirit): the leader latch and the leader's
 * address, and per job its registry entry, its latest completed checkpoint and its
 * checkpoint id counter.
 */
export const zkPaths = {
  latch: (c: ZooKeeperHaConfig): string => `${c.clusterPath}/leader/latch`,
  leader: (c: ZooKeeperHaConfig): string => `${c.clusterPath}/leader/connection_info`,
  jobs: (c: ZooKeeperHaConfig): string => `${c.clusterPath}/jobs`,
  job: (c: ZooKeeperHaConfig, jobId: string): string => `${c.clusterPath}/jobs/${jobId}`,
  latestCheckpoint: (c: ZooKeeperHaConfig, jobId: string): string => `${c.clusterPath}/jobs/${jobId}/latest-checkpoint`,
  checkpointIdCounter: (c: ZooKeeperHaConfig, jobId: string): string => `${c.clusterPath}/jobs/${jobId}/checkpoint-id-counter`,
};

/** `zookeeper://h1:2181,h2:2181` (a TaskManager's --jobmanager): the quorum, else undefined. */
export function quorumOfUrl(target: string): string | undefined {
  const m = /^zookeeper:\/\/([^/]+)\/?$/.exec(target);
  return m === null ? undefined : m[1]!;
}

/** Whether the configuration asks for ZooKeeper high availability. */
export function isZooKeeperHa(c: Configuration): boolean {
  return (c.getString('high-availability.type') ?? 'NONE').toLowerCase() === 'zookeeper';
}

/** The settings, checked; `quorum` given (a TaskManager's `--jobmanager zookeeper://...`) overrides the configuration's. */
export function zooKeeperHaConfig(c: Configuration, quorum?: string): ZooKeeperHaConfig {
  const q = quorum ?? c.getString('high-availability.zookeeper.quorum');
  if (q === undefined || q.trim() === '') {
    throw new ConfigError('high-availability.type is zookeeper but high-availability.zookeeper.quorum is not set: give the ZooKeeper servers as host:port,host:port,...');
  }
  for (const server of q.split(',')) {
    if (!/^[^\s:,]+:\d+$/.test(server.trim())) throw new ConfigError(`high-availability.zookeeper.quorum: '${server}' is not host:port (give host:port,host:port,...)`);
  }
  const root = c.getString('high-availability.zookeeper.path.root') ?? '/flink';
  const clusterId = c.getString('high-availability.cluster-id') ?? '/default';
  const clusterPath = posix.normalize(`/${root}/${clusterId}`).replace(/\/+$/, '');
  if (clusterPath === '' || clusterPath === '/') throw new ConfigError('high-availability.zookeeper.path.root and high-availability.cluster-id name the root node of ZooKeeper: give a path such as /flink and a cluster id such as /default');
  return {
    quorum: q.split(',').map((s) => s.trim()).join(','),
    clusterPath,
    sessionTimeoutMs: c.getNumber('high-availability.zookeeper.client.session-timeout'),
    connectionTimeoutMs: c.getNumber('high-availability.zookeeper.client.connection-timeout'),
    retryWaitMs: c.getNumber('high-availability.zookeeper.client.retry-wait'),
    maxRetryAttempts: c.getNumber('high-availability.zookeeper.client.max-retry-attempts'),
    tolerateSuspendedConnections: c.getBoolean('high-availability.zookeeper.client.tolerate-suspended-connections'),
  };
}
