import type { Broker, Connection, ConnectionPool, GenericError, metadataV12 } from '@platformatic/kafka';
import { checkConnectionOptions, checkOptionsObject, describeValue } from './kafka-options.js';
import { kafka, kafkaIfLoaded } from './kafka-protocol.js';
import { NonRecoverableError } from '../../runtime/recovery/non-recoverable-error.js';
import type { KafkaConnectionOptions, TopicInfo } from './kafka-types.js';

export type { KafkaConnectionOptions, TopicInfo, TopicPartitionInfo } from './kafka-types.js';

type MetadataResponse = Awaited<ReturnType<typeof metadataV12.api.async>>;

/** The error ids (`CONCURRENT_TRANSACTIONS`, ...) in a Kafka error response; empty for other errors. */
export function kafkaErrorIds(e: unknown): string[] {
  const ids: string[] = [];
  const visit = (x: unknown, depth: number): void => {
    if (depth > 4 || x === null || typeof x !== 'object') return;
    const r = x as { apiId?: unknown; errors?: unknown; cause?: unknown };
    if (typeof r.apiId === 'string') ids.push(r.apiId);
    if (Array.isArray(r.errors)) for (const c of r.errors) visit(c, depth + 1);
    if (r.cause !== undefined) visit(r.cause, depth + 1);
  };
  visit(e, 0);
  return ids;
}

/** Whether a request failed for a reason that goes away by itself (network, leader change, coordinator loading, concurrent transaction end). */
export function isRetriable(e: unknown): boolean {
  // Only the loaded module throws its errors.
  const k = kafkaIfLoaded();
  if (k === undefined || !(e instanceof Error) || !k.GenericError.isGenericError(e)) return false;
  if (e.code === 'PLT_KFK_NETWORK' || e.code === 'PLT_KFK_TIMEOUT') return true;
  const ids = kafkaErrorIds(e);
  return ids.length > 0 && ids.every((id) => RETRIABLE.has(id));
}

const RETRIABLE = new Set([
  'COORDINATOR_LOAD_IN_PROGRESS',
  'COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
  'CONCURRENT_TRANSACTIONS',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_OR_FOLLOWER',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'OFFSET_NOT_AVAILABLE',
  'KAFKA_STORAGE_ERROR',
  'THROTTLING_QUOTA_EXCEEDED',
]);

/** Errors after which cached leaders or coordinators are stale. */
const STALE = new Set(['NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'FENCED_LEADER_EPOCH']);

/** What `bootstrapServers` accepts, for error messages. */
const BOOTSTRAP_FORM = "'host:port[,host:port...]' (PLAINTEXT:// may prefix each) or an array of 'host:port' strings";

/**
 * The brokers of `bootstrapServers`: `host:port` entries separated by commas (or an array),
 * each optionally prefixed with `PLAINTEXT://` as Kafka's Java client accepts; IPv6 hosts in
 * brackets. `owner` names the component in errors ('kafka source', ...).
 */
export function parseBootstrap(servers: string | readonly string[], owner = 'kafka'): Broker[] {
  const isList = Array.isArray(servers) && servers.every((x: unknown) => typeof x === 'string');
  if (typeof servers !== 'string' && !isList) throw new Error(`${owner}: bootstrapServers must be ${BOOTSTRAP_FORM}, got ${describeValue(servers)}`);
  const list = (typeof servers === 'string' ? servers.split(',') : [...servers]).map((s) => s.trim()).filter((s) => s.length > 0);
  if (list.length === 0) throw new Error(`${owner}: bootstrapServers is empty; give ${BOOTSTRAP_FORM}`);
  return list.map((entry) => {
    let s = entry;
    const scheme = /^([A-Za-z][A-Za-z0-9_+.-]*):\/\//.exec(s);
    if (scheme !== null) {
      const name = scheme[1]!.toUpperCase();
      if (name === 'SSL' || name === 'SASL_SSL' || name === 'SASL_PLAINTEXT') {
        throw new Error(`${owner}: bootstrapServers entry '${entry}': ${scheme[1]}:// is not supported (Sluice connects to Kafka without TLS or SASL); give a PLAINTEXT listener as host:port or PLAINTEXT://host:port`);
      }
      if (name !== 'PLAINTEXT') throw new Error(`${owner}: bootstrapServers entry '${entry}' has the scheme '${scheme[1]}://', which is not a Kafka listener; give host:port or PLAINTEXT://host:port`);
      s = s.slice(scheme[0].length);
    }
    if (/[;\s]/.test(s)) {
      throw new Error(`${owner}: bootstrapServers entry '${entry}' is not host:port: separate servers with commas ('host1:9092,host2:9092'), not ';' or spaces`);
    }
    const i = s.lastIndexOf(':');
    const port = Number(s.slice(i + 1));
    const host = s.slice(0, i).replace(/^\[(.*)\]$/, '$1');
    if (i <= 0 || !/^[0-9]+$/.test(s.slice(i + 1)) || port <= 0 || port > 65535 || !/^[0-9A-Za-z._%:-]+$/.test(host)) {
      throw new Error(`${owner}: bootstrapServers entry '${entry}' is not host:port (a host name or address and a port in [1, 65535]; IPv6 addresses in brackets, [::1]:9092)`);
    }
    return { host, port };
  });
}

/**
 * The connections of one Kafka client (a sink writer or a source reader) to a cluster: the
 * bootstrap brokers, the brokers metadata names, the leader of a partition and the
 * coordinator of a group or transactional id, each looked up on demand and cached until an
 * error says the cache is stale. Requests are `@platformatic/kafka`'s low-level protocol
 * functions, retried here on retriable errors for up to `retryTimeoutMs`.
 */
export class KafkaCluster {
  /** Created with the first request (loading the Kafka client module). */
  private pool: ConnectionPool | undefined;
  private readonly bootstrap: Broker[];
  private brokers = new Map<number, Broker>();
  private readonly topics = new Map<string, TopicInfo>();
  private readonly coordinators = new Map<string, number>();
  readonly requestTimeoutMs: number;
  readonly retryTimeoutMs: number;
  private closed = false;
  /** The retries after a failed connection were logged (reset when a request succeeds). */
  private unreachableLogged = false;

  constructor(readonly options: KafkaConnectionOptions) {
    checkOptionsObject('kafka', options);
    this.bootstrap = parseBootstrap(options.bootstrapServers);
    checkConnectionOptions('kafka', options);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.retryTimeoutMs = options.retryTimeoutMs ?? 60_000;
  }

  private async connections(): Promise<ConnectionPool> {
    if (this.pool !== undefined) return this.pool;
    const k = await kafka();
    if (this.closed) throw new Error('kafka: the client is closed');
    if (this.pool === undefined) {
      this.pool = new k.ConnectionPool(this.options.clientId ?? 'sluice', {
        connectTimeout: Math.min(this.requestTimeoutMs, 10_000),
        requestTimeout: this.requestTimeoutMs,
        maxInflights: 5,
      });
      // Connection errors are reported through the requests that fail; an unheard 'error' event would crash the process.
      this.pool.on('failed', () => {});
    }
    return this.pool;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Runs `op`, again after a short pause while it fails with a retriable error, until
   * `deadline` (default: `retryTimeoutMs` from now). `op` gets the deadline: requests it makes
   * that retry on their own (a topic's metadata, a coordinator) pass it on, so nested retries
   * end together instead of each taking `retryTimeoutMs` again.
   */
  async retrying<T>(what: string, op: (deadline: number) => Promise<T>, retriable: (e: unknown) => boolean = isRetriable, deadline = Date.now() + this.retryTimeoutMs): Promise<T> {
    let pauseMs = 20;
    for (;;) {
      try {
        const result = await op(deadline);
        this.unreachableLogged = false;
        return result;
      } catch (e) {
        if (this.closed) throw e;
        if (kafkaErrorIds(e).some((id) => STALE.has(id)) || (e as GenericError).code === 'PLT_KFK_NETWORK') this.forgetCaches();
        if (!retriable(e) || Date.now() + pauseMs > deadline) throw withContext(e, what);
        this.logUnreachable(e, deadline);
        await sleep(pauseMs);
        pauseMs = Math.min(pauseMs * 2, 500);
      }
    }
  }

  /** Says once (until a request succeeds again) that no broker can be reached and for how long that is retried. */
  private logUnreachable(e: unknown, deadline: number): void {
    const log = this.options.log;
    const unreachable = log === undefined || this.unreachableLogged ? undefined : unreachableDetails.get(e as object);
    if (unreachable === undefined) return;
    this.unreachableLogged = true;
    const seconds = Math.max(0, deadline - Date.now()) / 1000;
    log!(`kafka: cannot reach ${unreachable.brokers} yet (${unreachable.reasons}); retrying for up to ${seconds >= 10 ? Math.round(seconds) : Number(seconds.toFixed(1))} s`);
  }

  private forgetCaches(): void {
    this.topics.clear();
    this.coordinators.clear();
  }

  async anyConnection(): Promise<Connection> {
    // The brokers of the last metadata, then the bootstrap servers not among them (a broker is
    // often its own bootstrap address: tried, and named in the error, once).
    const known = [...this.brokers.values()];
    const seen = new Set(known.map((b) => `${b.host}:${b.port}`));
    const candidates = [...known, ...this.bootstrap.filter((b) => !seen.has(`${b.host}:${b.port}`))];
    try {
      return await (await this.connections()).getFirstAvailable(candidates);
    } catch (e) {
      throw unreachableBrokers(e, candidates);
    }
  }

  /** A connection to a broker; `deadline`: of the retrying request asking (see retrying). */
  async connectionTo(nodeId: number, deadline?: number): Promise<Connection> {
    let broker = this.brokers.get(nodeId);
    if (broker === undefined) {
      await this.refreshMetadata([], isRetriable, deadline);
      broker = this.brokers.get(nodeId);
    }
    if (broker === undefined) throw new Error(`kafka: broker ${nodeId} is not in the cluster metadata`);
    return (await this.connections()).get(broker);
  }

  /** Metadata of the given topics (all topics with `null`); also refreshes the broker list. */
  async refreshMetadata(topics: string[] | null, retriable: (e: unknown) => boolean = isRetriable, deadline?: number): Promise<MetadataResponse> {
    return this.retrying('metadata', () => this.metadata(topics), retriable, deadline);
  }

  /** One Metadata request (not retried); updates the broker list and the topic cache. */
  private async metadata(topics: string[] | null): Promise<MetadataResponse> {
    const response = await (await kafka()).metadataV12.api.async(await this.anyConnection(), topics, false, false);
    this.brokers = new Map(response.brokers.map((b) => [b.nodeId, { host: b.host, port: b.port }]));
    for (const t of response.topics) {
      if (t.errorCode !== 0 || t.name === null || t.name === undefined) continue;
      this.topics.set(t.name, {
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions
          .map((p) => ({ partition: p.partitionIndex, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch }))
          .sort((a, b) => a.partition - b.partition),
      });
    }
    return response;
  }

  /** A topic's metadata if it is cached (a synchronous fast path for writers). */
  cachedTopic(name: string): TopicInfo | undefined {
    return this.topics.get(name);
  }

  /** A topic's partitions and leaders (cached); fails when the topic does not exist. `deadline`: of the retrying request asking (see retrying). */
  async topic(name: string, deadline?: number): Promise<TopicInfo> {
    const cached = this.topics.get(name);
    if (cached !== undefined && cached.partitions.every((p) => p.leaderId >= 0)) return cached;
    // A topic created a moment ago may be unknown to the broker asked for a little while; one
    // that stays unknown does not exist (a Kafka producer waits max.block.ms, 60 s, and then
    // says 'not present in metadata': this says which topic and what to do, sooner).
    const missingDeadline = Date.now() + Math.min(this.retryTimeoutMs, TOPIC_MISSING_GRACE_MS);
    const missing = (): TopicMissing => new TopicMissing(`kafka: topic '${name}' does not exist (create it first; Sluice does not create topics)`);
    // One level of retries (a retried refreshMetadata inside took the whole retryTimeoutMs
    // before this one started its own: twice the documented wait for an unreachable broker).
    return this.retrying(`metadata of topic '${name}'`, async () => {
      let response: MetadataResponse;
      try {
        response = await this.metadata([name]);
      } catch (e) {
        if (kafkaErrorIds(e).includes('UNKNOWN_TOPIC_OR_PARTITION')) throw missing();
        throw e;
      }
      const t = response.topics.find((x) => x.name === name);
      if (t === undefined || t.errorCode !== 0) throw missing();
      const info = this.topics.get(name)!;
      if (info.partitions.some((p) => p.leaderId < 0)) throw retriableError(`kafka: a partition of topic '${name}' has no leader`);
      return info;
    }, (e) => (e instanceof TopicMissing ? Date.now() < missingDeadline : isRetriable(e)), deadline);
  }

  /** Names of all topics (internal ones excluded). */
  async listTopics(): Promise<TopicInfo[]> {
    const response = await this.refreshMetadata(null);
    return response.topics.filter((t) => !t.isInternal && t.errorCode === 0 && t.name !== null).map((t) => this.topics.get(t.name!)!);
  }

  async leaderConnection(topic: string, partition: number, deadline?: number): Promise<{ connection: Connection; leaderEpoch: number; leaderId: number }> {
    const t = await this.topic(topic, deadline);
    const p = t.partitions[partition];
    if (p === undefined) throw new Error(`kafka: topic '${topic}' has no partition ${partition} (it has ${t.partitions.length})`);
    return { connection: await this.connectionTo(p.leaderId, deadline), leaderEpoch: p.leaderEpoch, leaderId: p.leaderId };
  }

  /** The coordinator of a consumer group or a transactional id (FindCoordinator), cached. */
  async coordinator(keyType: 'group' | 'transaction', key: string, deadline?: number): Promise<Connection> {
    const cacheKey = `${keyType}:${key}`;
    const known = this.coordinators.get(cacheKey);
    if (known !== undefined) return this.connectionTo(known, deadline);
    const response = await this.retrying(`find the ${keyType} coordinator of '${key}'`, async () => {
      const k = await kafka();
      const r = await k.findCoordinatorV6.api.async(
        await this.anyConnection(),
        keyType === 'group' ? k.FindCoordinatorKeyTypes.GROUP : k.FindCoordinatorKeyTypes.TRANSACTION,
        [key],
      );
      return r;
    }, isRetriable, deadline);
    const c = response.coordinators.find((x) => x.key === key);
    if (c === undefined) throw new Error(`kafka: no coordinator found for ${keyType} '${key}'`);
    this.brokers.set(c.nodeId, { host: c.host, port: c.port });
    this.coordinators.set(cacheKey, c.nodeId);
    return (await this.connections()).get({ host: c.host, port: c.port });
  }

  /** Forgets the cached coordinator of a key (after NOT_COORDINATOR). */
  forgetCoordinator(keyType: 'group' | 'transaction', key: string): void {
    this.coordinators.delete(`${keyType}:${key}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool?.close();
  }
}

/**
 * A topic the broker does not know. Sluice never asks a broker to create topics (its Metadata
 * requests do not allow auto-creation), so a restart finds it missing again: the job fails.
 */
class TopicMissing extends NonRecoverableError {
  override name = 'TopicMissing';
}

/** How long a topic the broker does not know is asked for again before it counts as missing. */
const TOPIC_MISSING_GRACE_MS = 5_000;

/**
 * The error of a failed connection to every broker, naming each with its cause (the client's
 * 'Cannot connect to any broker.' named none); still retriable, as a broker may be starting.
 */
function unreachableBrokers(e: unknown, brokers: readonly Broker[]): unknown {
  const k = kafkaIfLoaded();
  if (k === undefined || !(e instanceof Error) || !k.GenericError.isGenericError(e) || e.code !== 'PLT_KFK_MULTIPLE') return e;
  const causes = ((e as Error & { errors?: unknown[] }).errors ?? []).map((x) => {
    const cause = x instanceof Error ? (x.cause as Error | undefined) : undefined;
    return cause?.message ?? (x instanceof Error ? x.message : String(x));
  });
  const names = brokers.map((b) => `${b.host}:${b.port}`).join(', ');
  const why = causes.length > 0 ? ` (${[...new Set(causes)].join('; ')})` : '';
  const error = new k.GenericError('PLT_KFK_NETWORK', `kafka: cannot connect to any broker of ${names}${why}; check bootstrapServers and that the brokers are up`, { cause: e });
  // The short form for the retry log: the system error codes (ECONNREFUSED, ...) where there are any.
  const codes = ((e as Error & { errors?: unknown[] }).errors ?? []).map((x) => {
    const cause = x instanceof Error ? (x.cause as (Error & { code?: unknown }) | undefined) : undefined;
    return typeof cause?.code === 'string' ? cause.code : (cause?.message ?? (x instanceof Error ? x.message : String(x)));
  });
  unreachableDetails.set(error, { brokers: names, reasons: codes.length > 0 ? [...new Set(codes)].join(', ') : 'no answer' });
  return error;
}

/** The brokers and reasons of the errors unreachableBrokers made. */
const unreachableDetails = new WeakMap<object, { brokers: string; reasons: string }>();

/** Called after a request got an answer: the module is loaded. */
function retriableError(message: string): Error {
  return new (kafkaIfLoaded()!.GenericError)('PLT_KFK_NETWORK', message);
}

function withContext(e: unknown, what: string): Error {
  if (!(e instanceof Error)) return new Error(`kafka: ${what} failed: ${String(e)}`);
  if (e.message.startsWith('kafka:')) return e;
  const ids = kafkaErrorIds(e);
  const detail = ids.length > 0 ? `${ids.join(', ')} (${e.message})` : e.message;
  const text = `kafka: ${what} failed: ${detail}`;
  return ids.some((id) => NON_RECOVERABLE.has(id)) ? new NonRecoverableError(text, { cause: e }) : new Error(text, { cause: e });
}

/**
 * Kafka errors a restart does not change: the cluster's ACLs refuse the client, a setting the
 * broker does not take (a transaction timeout above its transaction.max.timeout.ms, a
 * compression or request version it does not support), an invalid topic name.
 */
const NON_RECOVERABLE = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'DELEGATION_TOKEN_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
  'UNSUPPORTED_SASL_MECHANISM',
  'INVALID_TRANSACTION_TIMEOUT',
  'INVALID_TOPIC_EXCEPTION',
  'UNSUPPORTED_COMPRESSION_TYPE',
  'UNSUPPORTED_VERSION',
]);

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
