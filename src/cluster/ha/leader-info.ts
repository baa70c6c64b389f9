/** What the leading JobManager publishes in ZooKeeper (`<cluster>/leader/connection_info`). */
export interface LeaderInfo {
  /** Where TaskManagers register (jobmanager.rpc.address and port). */
  readonly rpcHost: string;
  readonly rpcPort: number;
  /** Its REST API ('' without one). */
  readonly restUrl: string;
  /** A fresh UUID per grant of leadership: messages of an older leader session are ignored. */
  readonly leaderSessionId: string;
}

/** Parses connection_info's data; undefined if it is not a LeaderInfo. */
export function parseLeaderInfo(data: Buffer): LeaderInfo | undefined {
  try {
    const v = JSON.parse(data.toString('utf8')) as Partial<LeaderInfo>;
    if (typeof v.rpcHost !== 'string' || typeof v.rpcPort !== 'number' || typeof v.leaderSessionId !== 'string') return undefined;
    return { rpcHost: v.rpcHost, rpcPort: v.rpcPort, restUrl: typeof v.restUrl === 'string' ? v.restUrl : '', leaderSessionId: v.leaderSessionId };
  } catch {
    return undefined;
  }
}
