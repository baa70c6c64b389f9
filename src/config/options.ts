/**
 * Every configuration key Sluice knows, with Flink's names and defaults where Flink has the
 * option. Unknown keys are errors that name the closest known key.
 */
export type OptionType =
  | { readonly type: 'int'; readonly min?: number; readonly max?: number }
  /** Milliseconds; at most `max` (default MAX_DURATION_MS). */
  | { readonly type: 'duration'; readonly min?: number; readonly max?: number }
  | { readonly type: 'bytes' }
  | { readonly type: 'boolean' }
  | { readonly type: 'string' }
  /** A local directory, `file:///dir` (read as the path) or an `s3://` URI (see storage-uri.ts). */
  | { readonly type: 'storage-directory' }
  | { readonly type: 'enum'; readonly values: readonly string[]; readonly refused?: Readonly<Record<string, string>> }
  | { readonly type: 'number'; readonly min?: number };

export interface ConfigOption {
  readonly key: string;
  readonly spec: OptionType;
  /** Default in the option's own form (milliseconds for durations); undefined = unset. */
  readonly defaultValue: number | boolean | string | undefined;
  readonly description: string;
}

const opt = (key: string, spec: OptionType, defaultValue: ConfigOption['defaultValue'], description: string): ConfigOption => ({
  key,
  spec,
  defaultValue,
  description,
});

const MIN = 60_000;
/**
 * The longest duration an option takes (2^31 - 1 ms, 24.8 days): Node's timers take no
 * longer delay (a longer one fires after 1 ms), and every duration here ends up in one.
 */
export const MAX_DURATION_MS = 2_147_483_647;
const PORT = { type: 'int', min: 0, max: 65_535 } as const;

export const OPTIONS: readonly ConfigOption[] = [
  // pipeline
  opt('parallelism.default', { type: 'int', min: 1, max: 32_768 }, 1, 'Parallelism of operators that set none.'),
  opt('pipeline.max-parallelism', { type: 'int', min: 1, max: 32_768 }, undefined, 'Max parallelism (number of key groups) of operators that set none; default derives from the parallelism (at least 128).'),
  opt('pipeline.auto-watermark-interval', { type: 'duration' }, 200, 'How often periodic watermarks are generated; 0 turns periodic watermarks off.'),
  opt(
    'pipeline.watermark-alignment.allow-unaligned-source-splits',
    { type: 'boolean' },
    false,
    'Watermark alignment with a source reader that emits per split but cannot pause single splits (no pauseOrResumeSplits): false fails the job when one of its splits runs ahead of the group; true aligns such subtasks as a whole only.',
  ),
  opt('pipeline.operator-chaining.enabled', { type: 'boolean' }, true, 'Chain operators connected by forward edges into one subtask.'),
  opt('pipeline.name', { type: 'string' }, undefined, 'Name of the job.'),
  opt('execution.buffer-batch-size', { type: 'int', min: 1 }, 1024, 'Records per network buffer (batch) between subtasks.'),
  opt('taskmanager.network.memory.buffers-per-channel', { type: 'int', min: 1 }, 2, 'Buffers each channel may hold before the producer is backpressured (exclusive buffers).'),
  opt('taskmanager.network.memory.floating-buffers-per-gate', { type: 'int', min: 0 }, 8, 'Extra buffers shared by the channels of an input gate.'),
  // REST
  opt('rest.port', PORT, 8081, 'Port of the REST API (0: any free port). `sluice run` falls back to a free port when it is taken.'),
  opt('rest.address', { type: 'string' }, '127.0.0.1', 'Address the REST API binds to.'),
  opt('rest.auth.token', { type: 'string' }, undefined, 'When set, REST requests need the header Authorization: Bearer <token>.'),
  opt('rest.enabled', { type: 'boolean' }, true, 'Whether `sluice run` serves the REST API for its job.'),
  // cluster
  opt('jobmanager.rpc.address', { type: 'string' }, '127.0.0.1', 'Address the JobManager listens on for TaskManagers.'),
  opt('jobmanager.rpc.port', PORT, 6123, 'Port the JobManager listens on for TaskManagers (0: any free port).'),
  opt('taskmanager.numberOfTaskSlots', { type: 'int', min: 1 }, 1, 'Slots of a TaskManager: how many parallel pipelines (one subtask of each vertex) it runs.'),
  opt('taskmanager.host', { type: 'string' }, '127.0.0.1', 'Address a TaskManager listens on for data from other TaskManagers (and announces to them).'),
  opt('env.java.opts.taskmanager', { type: 'string' }, undefined, "Extra Node.js options of the TaskManager processes a local cluster starts (`sluice run`, `sluice cluster`), as Flink's JVM options of TaskManagers, e.g. `--max-old-space-size=8192`. Unless they set `--max-semi-space-size` or `--min-semi-space-size`, TaskManagers get both at 64 (a larger young generation, fixed: fewer records in flight survive a scavenge, and no pages are given back and faulted in again)."),
  opt('taskmanager.data.port', PORT, 0, 'Port of a TaskManager for data from other TaskManagers (0: any free port).'),
  opt('task.cancellation.timeout', { type: 'duration' }, 180000, 'How long a canceled task may take to close its operators; then its TaskManager fails fatally (the embedded runtime fails the job), since they may still act on external systems. 0: no limit.'),
  opt('heartbeat.interval', { type: 'duration', min: 1 }, 1000, 'How often JobManager and TaskManagers exchange heartbeats (Flink: 10 s).'),
  opt('heartbeat.timeout', { type: 'duration', min: 1 }, 5000, 'A TaskManager (or JobManager) silent this long is considered lost and its subtasks fail over; larger than heartbeat.interval (Flink: 50 s; a dead process is noticed at once through its connection).'),
  opt('slot.request.timeout', { type: 'duration' }, 300_000, 'How long a job waits for enough TaskManager slots before it fails.'),
  opt('metrics.reporter.prom.port', PORT, 0, "Port of a TaskManager's /metrics (Prometheus text format); 0: any free port, announced to the JobManager and listed by /taskmanagers (Flink: 9249)."),
  opt('metrics.fetcher.update-interval', { type: 'duration' }, 10_000, "How often the JobManager's REST metric queries (vertex metrics, back pressure) fetch the task and operator metrics from the TaskManagers; queries in between see the last fetch. 0: every query fetches (as Flink)."),
  opt('cluster.secret', { type: 'string' }, undefined, 'Shared secret TaskManagers and JobManager prove they know before they talk (HMAC); unset: no check.'),
  opt('high-availability.storageDir', { type: 'storage-directory' }, undefined, 'Where the JobManager keeps job graphs and the pointer to their latest checkpoint, to take its jobs back after a restart (`sluice jobmanager`, `sluice cluster`; not the embedded cluster of `sluice run`); default: execution.checkpointing.dir.'),
  // logging (Flink sets these in log4j's files, not in its configuration)
  opt('log.level', { type: 'enum', values: ['debug', 'info', 'warn', 'error'] }, 'info', "Lowest level of the lines a `sluice` process logs (run, jobmanager, taskmanager, cluster; the TaskManagers a local cluster starts take it too): debug also shows completed checkpoints. `--log-level` sets it. A process's setting, not a job's: in a job's configuration submitted to a cluster it does nothing."),
  opt('log.format', { type: 'enum', values: ['plain', 'json'] }, 'plain', 'How a `sluice` process writes its log lines on stderr: plain `[component] LEVEL message` lines, or json: one JSON object per line with time, level, message, component and, when known, jobId, vertex, subtask, taskManager, checkpointId, err. `--log-format` sets it.'),
  // high availability on ZooKeeper (high-availability.storageDir above: where the submitted jobs are kept; required with zookeeper)
  opt('high-availability.type', { type: 'enum', values: ['NONE', 'zookeeper'], refused: { kubernetes: 'Kubernetes high availability is not supported (yet): use zookeeper' } }, 'NONE', 'NONE: one JobManager, which takes its jobs back from high-availability.storageDir when started again. zookeeper: any number of `sluice jobmanager` processes elect a leader on ZooKeeper (high-availability.zookeeper.quorum); the others stand by and take over when its ZooKeeper session ends.'),
  opt('high-availability.cluster-id', { type: 'string' }, '/default', "The cluster's node under high-availability.zookeeper.path.root: JobManagers with the same root and cluster id form one cluster (elect one leader and share its jobs)."),
  opt('high-availability.zookeeper.quorum', { type: 'string' }, undefined, 'The ZooKeeper ensemble (high-availability.type zookeeper): host:port,host:port,...'),
  opt('high-availability.zookeeper.path.root', { type: 'string' }, '/flink', 'The ZooKeeper node under which Sluice keeps its clusters (leader latch, leader address, job registry, checkpoint pointers and id counters).'),
  opt('high-availability.zookeeper.client.session-timeout', { type: 'duration', min: 1 }, 60_000, "ZooKeeper session timeout: a leader silent this long loses its session, and a standby takes over (the ZooKeeper servers bound it by their minSessionTimeout and maxSessionTimeout, by default 2 and 20 times their tickTime)."),
  opt('high-availability.zookeeper.client.connection-timeout', { type: 'duration', min: 1 }, 15_000, 'How long a JobManager or TaskManager waits for its first connection to ZooKeeper before it fails to start (a JobManager) or says so and keeps trying (a TaskManager).'),
  opt('high-availability.zookeeper.client.retry-wait', { type: 'duration' }, 5_000, 'Pause between attempts of a ZooKeeper operation that failed on a lost connection.'),
  opt('high-availability.zookeeper.client.max-retry-attempts', { type: 'int', min: 0 }, 3, 'Attempts of a ZooKeeper operation after the first that failed on a lost connection.'),
  opt('high-availability.zookeeper.client.tolerate-suspended-connections', { type: 'boolean' }, false, 'false: a leader whose connection to ZooKeeper is lost (suspended) stops leading at once, as Flink does by default. true: it keeps leading until its session expires or stays disconnected for the session timeout, riding out short connection losses at the risk of two leaders for a moment.'),
  // checkpointing
  opt('execution.checkpointing.interval', { type: 'duration' }, undefined, 'Base interval between checkpoints; unset = checkpointing off.'),
  opt('execution.checkpointing.mode', { type: 'enum', values: ['EXACTLY_ONCE', 'AT_LEAST_ONCE'] }, 'EXACTLY_ONCE', 'Checkpointing guarantee.'),
  opt('execution.checkpointing.timeout', { type: 'duration' }, 10 * MIN, 'A checkpoint still running after this is aborted.'),
  opt('execution.checkpointing.min-pause', { type: 'duration' }, 0, 'Minimum time from the end of one checkpoint to the start of the next.'),
  opt('execution.checkpointing.max-concurrent-checkpoints', { type: 'int', min: 1 }, 1, 'Checkpoints in flight at once.'),
  opt('execution.checkpointing.tolerable-failed-checkpoints', { type: 'int', min: 0 }, 0, 'Consecutive checkpoint failures tolerated before the job fails over.'),
  opt('execution.checkpointing.externalized-checkpoint-retention', { type: 'enum', values: ['NO_EXTERNALIZED_CHECKPOINTS', 'DELETE_ON_CANCELLATION', 'RETAIN_ON_CANCELLATION'] }, 'NO_EXTERNALIZED_CHECKPOINTS', 'What happens to retained checkpoints when the job is cancelled.'),
  opt('execution.checkpointing.unaligned.enabled', { type: 'boolean' }, false, 'Unaligned checkpoints (EXACTLY_ONCE and max-concurrent 1 only).'),
  opt('execution.checkpointing.aligned-checkpoint-timeout', { type: 'duration' }, 0, '>0: start aligned and switch to unaligned when alignment takes longer.'),
  opt('execution.checkpointing.num-retained', { type: 'int', min: 1 }, 1, 'Completed checkpoints kept.'),
  opt('execution.checkpointing.checkpoints-after-tasks-finish', { type: 'boolean' }, true, 'Keep checkpointing after some tasks finished; take a final checkpoint.'),
  opt('execution.checkpointing.incremental', { type: 'boolean' }, false, 'Upload only the difference to the previous checkpoint.'),
  opt('execution.checkpointing.dir', { type: 'storage-directory' }, undefined, 'Checkpoint directory.'),
  opt('execution.checkpointing.savepoint-dir', { type: 'storage-directory' }, undefined, 'Default savepoint directory.'),
  opt('execution.checkpointing.storage', { type: 'enum', values: ['jobmanager', 'filesystem'] }, undefined, 'Checkpoint storage; default: jobmanager without a dir, filesystem with one.'),
  opt('execution.checkpointing.data-inline-threshold', { type: 'bytes' }, 20 * 1024, 'State chunks smaller than this are inlined in _metadata.'),
  // S3 (s3:// checkpoint and savepoint directories); Flink's s3.* names, AWS_* variables as fallback
  opt('s3.endpoint', { type: 'string' }, undefined, 'Endpoint of the S3-compatible store, e.g. http://127.0.0.1:9000; default AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS S3 of the region.'),
  opt('s3.access-key', { type: 'string' }, undefined, 'Access key id; default AWS_ACCESS_KEY_ID.'),
  opt('s3.secret-key', { type: 'string' }, undefined, 'Secret access key; default AWS_SECRET_ACCESS_KEY.'),
  opt('s3.region', { type: 'string' }, undefined, 'Region used to sign requests; default AWS_REGION, AWS_DEFAULT_REGION, else us-east-1.'),
  opt('s3.path.style.access', { type: 'boolean' }, false, 'Address buckets as <endpoint>/<bucket>/<key> instead of <bucket>.<endpoint>/<key> (most self-hosted stores need it).'),
  opt('s3.upload.min.part.size', { type: 'bytes' }, 5 * 1024 * 1024, 'Files larger than this are uploaded in parts of this size (multipart upload); AWS needs at least 5 MiB.'),
  opt('s3.retry.limit', { type: 'int', min: 0 }, 5, 'Retries of a failed S3 request (network error, 5xx, throttling), with exponential backoff.'),
  opt('s3.retry.interval', { type: 'duration' }, 200, 'Delay before the first retry; doubles with each retry, at most 10 s.'),
  opt('execution.state-recovery.claim-mode', { type: 'enum', values: ['NO_CLAIM', 'CLAIM'] }, 'NO_CLAIM', 'Restoring with -s: CLAIM makes the job own the snapshot (deleted once newer checkpoints subsume it); NO_CLAIM never touches it.'),
  // state
  opt(
    'state.backend.type',
    {
      type: 'enum',
      values: ['hashmap', 'lmdb'],
      refused: {
        rocksdb:
          "Sluice has no RocksDB backend: its on-disk backend for state larger than memory is 'lmdb' (an embedded LMDB store with synchronous reads); " +
          "set state.backend.type: lmdb (see docs/state.md)",
      },
    },
    'hashmap',
    'Keyed state backend: hashmap (objects on the heap) or lmdb (embedded store on local disk, for state larger than memory).',
  ),
  opt(
    'state.backend.hashmap.snapshot-thread',
    { type: 'boolean' },
    true,
    'Full checkpoints of heap state are assembled by a worker thread from a copy of the state kept up to date with the changes of each checkpoint: the task thread only captures what changed. Costs a second copy of the state (as snapshot bytes) in memory; false: the task thread serializes the whole state at each checkpoint.',
  ),
  opt('state.backend.lmdb.localdir', { type: 'string' }, undefined, "Directory for the lmdb backend's working files (one subdirectory per keyed operator subtask) and its spilled full snapshots; default: the OS temp dir."),
  opt('state.backend.lmdb.cache-entries', { type: 'int', min: 1 }, 100_000, 'Hot entries per keyed operator subtask kept as objects by the lmdb backend (write-back cache).'),
  opt('state.backend.changelog.enabled', { type: 'boolean' }, false, 'Log keyed state changes continuously to checkpoint storage; a checkpoint only adds the tail (both backends).'),
  opt('state.backend.changelog.periodic-materialize.interval', { type: 'duration' }, 10 * MIN, 'How often the state is materialized (a full snapshot that restarts the changelog); also when the log outgrows the state.'),
  opt('state.changelog.dstl.dfs.batch.persist-delay', { type: 'duration' }, 1000, 'How often the changes of a keyed operator subtask are sent to its changelog (Flink: 10 ms; here each segment goes through the JobManager).'),
  // restart strategies
  opt('restart-strategy.type', { type: 'enum', values: ['none', 'disable', 'off', 'fixed-delay', 'fixeddelay', 'failure-rate', 'failurerate', 'exponential-delay', 'exponentialdelay'] }, undefined, 'Restart strategy; default none without checkpointing, exponential-delay with it.'),
  opt('restart-strategy.fixed-delay.attempts', { type: 'int', min: 0 }, 1, 'Restart attempts before the job fails.'),
  opt('restart-strategy.fixed-delay.delay', { type: 'duration' }, 1000, 'Delay between restarts.'),
  opt('restart-strategy.failure-rate.max-failures-per-interval', { type: 'int', min: 1 }, 1, 'Failures tolerated per interval.'),
  opt('restart-strategy.failure-rate.failure-rate-interval', { type: 'duration' }, MIN, 'Interval for the failure rate.'),
  opt('restart-strategy.failure-rate.delay', { type: 'duration' }, 1000, 'Delay between restarts.'),
  opt('restart-strategy.exponential-delay.initial-backoff', { type: 'duration' }, 1000, 'First restart delay.'),
  opt('restart-strategy.exponential-delay.max-backoff', { type: 'duration' }, MIN, 'Largest restart delay.'),
  opt('restart-strategy.exponential-delay.backoff-multiplier', { type: 'number', min: 1 }, 1.5, 'Delay growth per failure.'),
  opt('restart-strategy.exponential-delay.reset-backoff-threshold', { type: 'duration' }, 60 * MIN, 'Time without failure after which the delay resets.'),
  opt('restart-strategy.exponential-delay.jitter-factor', { type: 'number', min: 0 }, 0.1, 'Random jitter applied to the delay.'),
  opt('restart-strategy.exponential-delay.attempts-before-reset-backoff', { type: 'int', min: 1 }, 2147483647, 'Attempts before the job fails.'),
];

export const OPTIONS_BY_KEY: ReadonlyMap<string, ConfigOption> = new Map(OPTIONS.map((o) => [o.key, o]));
