import { afterEach, describe, expect, it, vi } from 'vitest';
import { KafkaCluster, parseBootstrap } from './kafka-cluster.js';
import { kafkaDeadLetter } from './kafka-dead-letter.js';
import { kafka } from './kafka-protocol.js';
import { KafkaSink, type KafkaSinkOptions } from './kafka-sink.js';
import { KafkaSource, type KafkaSourceOptions } from './kafka-source.js';

// Broker-less: the options are checked when a source, sink or client is constructed (as
// Kafka's Java clients reject bad config at construction); the only address contacted is
// 127.0.0.1:1, where nothing listens.

const bootstrapServers = '127.0.0.1:1';

/** Options as a user's untyped (or `as any`) code can pass them. */
function source(extra: Record<string, unknown>): KafkaSource<unknown> {
  return new KafkaSource<unknown>({ bootstrapServers, topics: 'orders', ...extra } as unknown as KafkaSourceOptions<unknown>);
}

function sink(extra: Record<string, unknown>): KafkaSink<unknown> {
  return new KafkaSink<unknown>({ bootstrapServers, topic: 'totals', ...extra } as unknown as KafkaSinkOptions<unknown>);
}

function cluster(extra: Record<string, unknown>): KafkaCluster {
  return new KafkaCluster({ bootstrapServers, ...extra } as unknown as ConstructorParameters<typeof KafkaCluster>[0]);
}

describe('Kafka numeric options are finite numbers in range, checked by the constructors', () => {
  it("retryTimeoutMs: '3s' fails the KafkaCluster, KafkaSource and KafkaSink constructors (it made a deadline that never passed: a hang)", () => {
    expect(() => cluster({ retryTimeoutMs: '3s' })).toThrow(
      "kafka: retryTimeoutMs must be a finite number of milliseconds >= 0 (0: no retries), got '3s' (a string; give a number of milliseconds)",
    );
    expect(() => source({ retryTimeoutMs: '3s' })).toThrow(/^kafka source: retryTimeoutMs must be a finite number of milliseconds >= 0 .*, got '3s'/);
    expect(() => sink({ retryTimeoutMs: '3s' })).toThrow(/^kafka sink: retryTimeoutMs must be a finite number of milliseconds >= 0 .*, got '3s'/);
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY, null, 10n]) expect(() => cluster({ retryTimeoutMs: bad })).toThrow(/kafka: retryTimeoutMs must be/);
    expect(() => cluster({ retryTimeoutMs: 0 })).not.toThrow();
  });

  it('requestTimeoutMs: an integer number of milliseconds in [1, 2147483647] (it is sent to the broker as INT32)', () => {
    expect(() => cluster({ requestTimeoutMs: '30s' })).toThrow("kafka: requestTimeoutMs must be an integer number of milliseconds in [1, 2147483647], got '30s'");
    expect(() => source({ requestTimeoutMs: 0 })).toThrow('kafka source: requestTimeoutMs must be an integer number of milliseconds in [1, 2147483647], got 0');
    expect(() => sink({ requestTimeoutMs: 2 ** 31 })).toThrow(/kafka sink: requestTimeoutMs must be .* got 2147483648/);
    expect(() => sink({ requestTimeoutMs: 1.5 })).toThrow(/kafka sink: requestTimeoutMs must be an integer/);
  });

  it('source: queueRecordsMax is an integer >= 1 (0 hung the fetch loop), fetch sizes and intervals are checked', () => {
    expect(() => source({ queueRecordsMax: 0 })).toThrow('kafka source: queueRecordsMax must be an integer number of records >= 1, got 0');
    expect(() => source({ queueRecordsMax: 2.5 })).toThrow(/queueRecordsMax must be an integer/);
    expect(() => source({ fetchMaxWaitMs: '200' })).toThrow(/kafka source: fetchMaxWaitMs must be an integer number of milliseconds in \[0, 2147483647\], got '200'/);
    expect(() => source({ fetchPartitionMaxBytes: 0 })).toThrow(/kafka source: fetchPartitionMaxBytes must be an integer number of bytes in \[1, 2147483647\], got 0/);
    expect(() => source({ partitionDiscoveryIntervalMs: -1 })).toThrow(/kafka source: partitionDiscoveryIntervalMs must be a finite number of milliseconds >= 0 \(0: off\), got -1/);
    expect(() => source({ queueRecordsMax: 1, fetchMaxWaitMs: 0, fetchPartitionMaxBytes: 1, partitionDiscoveryIntervalMs: 0 })).not.toThrow();
  });

  it('sink: batchRecordsMax is an integer >= 1 and transactionTimeoutMs an integer number of milliseconds, whatever the delivery guarantee', () => {
    expect(() => sink({ batchRecordsMax: 0 })).toThrow('kafka sink: batchRecordsMax must be an integer number of records >= 1, got 0');
    expect(() => sink({ transactionTimeoutMs: '15min' })).toThrow(/kafka sink: transactionTimeoutMs must be an integer number of milliseconds in \[1, 2147483647\], got '15min'/);
  });

  it('kafkaDeadLetter checks its connection options and idleCloseMs', () => {
    expect(() => kafkaDeadLetter({ bootstrapServers, topic: 'dlq', retryTimeoutMs: '1s' as unknown as number })).toThrow(/^kafkaDeadLetter: retryTimeoutMs must be/);
    expect(() => kafkaDeadLetter({ bootstrapServers, topic: 'dlq', idleCloseMs: -5 })).toThrow(/kafkaDeadLetter: idleCloseMs must be .* got -5/);
    expect(() => kafkaDeadLetter({ bootstrapServers, topic: '' })).toThrow(/kafkaDeadLetter: topic must be a non-empty string/);
  });
});

describe('KafkaSource refuses values it does not document instead of reading something else', () => {
  it("isolationLevel: 'read-committed' is refused (it silently read uncommitted records, breaking exactly-once)", () => {
    expect(() => source({ isolationLevel: 'read-committed' })).toThrow(
      "kafka source: isolationLevel must be 'read_committed' or 'read_uncommitted', got 'read-committed' (did you mean 'read_committed'?)",
    );
    expect(() => source({ isolationLevel: 'READ_COMMITTED' })).toThrow(/did you mean 'read_committed'/);
    expect(source({ isolationLevel: 'read_committed' }).isolation()).toBe(1);
    expect(source({ isolationLevel: 'read_uncommitted' }).isolation()).toBe(0);
  });

  it("stoppingOffsets: only 'latest' (or absent); 'earliest' made the source silently unbounded", () => {
    expect(() => source({ stoppingOffsets: 'earliest' })).toThrow(/^kafka source: stoppingOffsets must be 'latest' \(bounded: .*\) or absent \(unbounded\), got 'earliest'/);
    expect(source({ stoppingOffsets: 'latest' }).boundedness).toBe('bounded');
    expect(source({}).boundedness).toBe('unbounded');
  });

  it("startingOffsets: 'earlist' and { timestampMs: 'yesterday' } fail at construction naming the accepted values", () => {
    expect(() => source({ startingOffsets: 'earlist' })).toThrow(
      "kafka source: startingOffsets must be 'earliest', 'latest', { timestampMs: <epoch ms> } or { committed: true, fallback?: 'earliest' | 'latest' }, got 'earlist' (did you mean 'earliest'?)",
    );
    expect(() => source({ startingOffsets: { timestampMs: 'yesterday' } })).toThrow(
      /^kafka source: startingOffsets\.timestampMs must be an integer number of epoch milliseconds >= 0, got 'yesterday' \(a string: give a number/,
    );
    expect(() => source({ startingOffsets: { timestampMs: new Date(0) } })).toThrow(/timestampMs must be .* got a Date \(1970-01-01T00:00:00\.000Z\) \(a Date: give date\.getTime\(\)\)/);
    expect(() => source({ startingOffsets: { timestampMs: -2 } })).toThrow(/timestampMs must be an integer number of epoch milliseconds >= 0, got -2/);
    expect(() => source({ startingOffsets: { timestamp: 5 } })).toThrow(/startingOffsets must be 'earliest', .* got \{"timestamp":5\}/);
    expect(() => source({ startingOffsets: null })).toThrow(/startingOffsets must be .* got null/);
    expect(() => source({ groupId: 'g', startingOffsets: { committed: false } })).toThrow(/startingOffsets\.committed must be true, got false/);
    expect(() => source({ groupId: 'g', startingOffsets: { committed: true, fallback: 'earlist' } })).toThrow(
      /startingOffsets\.fallback must be 'earliest' or 'latest' .* got 'earlist' \(did you mean 'earliest'\?\)/,
    );
    expect(() => source({ startingOffsets: { committed: true } })).toThrow('kafka source: startingOffsets { committed } needs a groupId');
    for (const ok of ['earliest', 'latest', { timestampMs: 0 }, { timestampMs: 1_767_225_600_000 }, { committed: true }, { committed: true, fallback: 'latest' }]) {
      expect(() => source({ groupId: 'g', startingOffsets: ok })).not.toThrow();
    }
  });

  it("deserializer: 'avro' and 'JSON' fail at construction (they failed only in the reader, after connecting)", () => {
    expect(() => source({ deserializer: 'avro' })).toThrow(
      "kafka source: deserializer must be 'string', 'json', 'bytes' or a function (bytes: Buffer | undefined) => T, got 'avro'",
    );
    expect(() => source({ deserializer: 'JSON' })).toThrow(/deserializer must be .* got 'JSON' \(did you mean 'json'\?\)/);
    expect(() => source({ recordDeserializer: 'json' })).toThrow(/kafka source: recordDeserializer must be a function \(record: ConsumedRecord\) => T, got 'json'/);
    for (const ok of ['string', 'json', 'bytes', (b: Buffer | undefined) => b]) expect(() => source({ deserializer: ok })).not.toThrow();
  });

  it('topics: null and other wrong types name the option (it was "Cannot read properties of null")', () => {
    expect(() => source({ topics: null })).toThrow('kafka source: topics must be a topic name or a non-empty array of topic names, got null');
    expect(() => source({ topics: ['a', 7] })).toThrow(/topics must be .* got \["a",7\]/);
    expect(() => source({ topics: [] })).toThrow(/topics must be .* got \[\]/);
    expect(() => source({ topics: undefined, topicPattern: '^orders' })).toThrow("kafka source: topicPattern must be a RegExp (e.g. /^orders-/), got '^orders'");
    expect(() => source({ topics: undefined })).toThrow('kafka source: give either topics or topicPattern (neither was given)');
    expect(() => source({ topicPattern: /x/ })).toThrow('kafka source: give either topics or topicPattern (not both)');
    expect(() => source({ groupId: 42 })).toThrow(/kafka source: groupId must be a non-empty string .* got 42/);
    expect(() => source({ commitOffsetsOnCheckpoint: 'no' })).toThrow("kafka source: commitOffsetsOnCheckpoint must be true or false, got 'no'");
    expect(() => source({ deadLetter: 'orders.dlq' })).toThrow(/kafka source: deadLetter must be \{ topic: '<dead-letter topic>' \} or a function .* got 'orders\.dlq'/);
    expect(() => source({ log: console })).toThrow(/kafka source: log must be a function/);
    expect(() => new KafkaSource(undefined as unknown as KafkaSourceOptions<string>)).toThrow(/kafka source: the options must be an object/);
  });

  it('a topicPattern with the g flag matches every matching topic (its lastIndex skipped every other one)', () => {
    const s = new KafkaSource<string>({ bootstrapServers, topicPattern: /^orders-/g });
    expect(['orders-1', 'orders-2', 'orders-3', 'other'].map((t) => s.matches(t))).toEqual([true, true, true, false]);
  });
});

describe('KafkaSink refuses bad options at construction (they failed in every restart of the writer)', () => {
  it("valueSerializer / keySerializer: 'avro' names the option and the accepted values", () => {
    expect(() => sink({ valueSerializer: 'avro' })).toThrow(
      "kafka sink: valueSerializer must be 'string', 'json', 'bytes' or a function (value) => Buffer | undefined, got 'avro'",
    );
    expect(() => sink({ keySerializer: 'JSON' })).toThrow(/kafka sink: keySerializer must be .* got 'JSON' \(did you mean 'json'\?\)/);
    for (const ok of ['string', 'json', 'bytes', () => undefined]) expect(() => sink({ valueSerializer: ok, keySerializer: ok })).not.toThrow();
  });

  it('compression must be a codec the sink has', () => {
    expect(() => sink({ compression: 'brotli' })).toThrow("kafka sink: compression must be 'none', 'gzip', 'snappy', 'lz4' or 'zstd', got 'brotli'");
    expect(() => sink({ compression: 'GZIP' })).toThrow(/did you mean 'gzip'/);
    for (const ok of ['none', 'gzip', 'snappy', 'lz4']) expect(() => sink({ compression: ok })).not.toThrow();
    const zstd = (): unknown => sink({ compression: 'zstd' });
    if (Number(process.versions.node.split('.')[0]) < 22) expect(zstd).toThrow(/kafka sink: compression 'zstd' needs Node\.js 22\.15 or later/);
  });

  it('wrong types of the other options name the option', () => {
    expect(() => sink({ topic: null })).toThrow('kafka sink: topic is required: a topic name or a function (element) => topic name, got null');
    expect(() => sink({ deliveryGuarantee: 'exactly_once', transactionalIdPrefix: 'p' })).toThrow(
      "kafka sink: deliveryGuarantee must be 'none', 'at-least-once' or 'exactly-once', got 'exactly_once' (did you mean 'exactly-once'?)",
    );
    expect(() => sink({ key: 'customer' })).toThrow("kafka sink: key must be a function (element) => key, got 'customer'");
    expect(() => sink({ partition: 3 })).toThrow(/kafka sink: partition must be a function \(element, partitions\) => partition, got 3/);
    expect(() => sink({ deadLetter: { topic: '' } })).toThrow(/kafka sink: deadLetter must be \{ topic: '<dead-letter topic>' \} or a function/);
  });
});

describe('bootstrapServers', () => {
  it('PLAINTEXT:// prefixes are stripped, as the Java client accepts them', () => {
    expect(parseBootstrap('PLAINTEXT://localhost:9092')).toEqual([{ host: 'localhost', port: 9092 }]);
    expect(parseBootstrap('plaintext://a:1, PLAINTEXT://[::1]:2')).toEqual([
      { host: 'a', port: 1 },
      { host: '::1', port: 2 },
    ]);
    expect(() => source({ bootstrapServers: 'PLAINTEXT://localhost:9092' })).not.toThrow();
  });

  it('SSL:// and SASL_* are refused as unsupported; other schemes as not a Kafka listener', () => {
    expect(() => parseBootstrap('SSL://broker:9093')).toThrow(/^kafka: bootstrapServers entry 'SSL:\/\/broker:9093': SSL:\/\/ is not supported \(Sluice connects to Kafka without TLS or SASL\)/);
    expect(() => parseBootstrap(['a:1', 'SASL_SSL://b:9094'])).toThrow(/SASL_SSL:\/\/ is not supported/);
    expect(() => sink({ bootstrapServers: 'SASL_PLAINTEXT://b:9095' })).toThrow(/^kafka sink: bootstrapServers entry .* SASL_PLAINTEXT:\/\/ is not supported/);
    expect(() => parseBootstrap('http://b:9092')).toThrow("kafka: bootstrapServers entry 'http://b:9092' has the scheme 'http://', which is not a Kafka listener; give host:port or PLAINTEXT://host:port");
  });

  it("';' and spaces between servers are refused, saying servers are separated by commas", () => {
    const commas = /separate servers with commas \('host1:9092,host2:9092'\), not ';' or spaces/;
    expect(() => parseBootstrap('localhost:1;localhost:2')).toThrow(commas);
    expect(() => parseBootstrap('localhost:1 localhost:2')).toThrow(commas);
    expect(() => source({ bootstrapServers: 'localhost:1;localhost:2' })).toThrow(/^kafka source: bootstrapServers entry 'localhost:1;localhost:2' is not host:port: separate servers with commas/);
  });

  it('other malformed values name the option, the value and the form', () => {
    expect(() => parseBootstrap('localhost')).toThrow(/kafka: bootstrapServers entry 'localhost' is not host:port \(a host name or address and a port in \[1, 65535\]/);
    expect(() => parseBootstrap('localhost:9092/')).toThrow(/entry 'localhost:9092\/' is not host:port/);
    expect(() => parseBootstrap('localhost:0x10')).toThrow(/entry 'localhost:0x10' is not host:port/);
    expect(() => parseBootstrap(' , ')).toThrow("kafka: bootstrapServers is empty; give 'host:port[,host:port...]' (PLAINTEXT:// may prefix each) or an array of 'host:port' strings");
    expect(() => source({ bootstrapServers: null })).toThrow(/^kafka source: bootstrapServers must be 'host:port\[,host:port\.\.\.\]' .* got null/);
    expect(() => source({ bootstrapServers: ['a:1', 2] })).toThrow(/bootstrapServers must be .* got \["a:1",2\]/);
  });
});

describe('an unreachable broker is retried for retryTimeoutMs in all', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A cluster whose every connection attempt is refused (the pool is replaced: no sockets, no real time). */
  async function refusingCluster(retryTimeoutMs: number, log?: (m: string) => void): Promise<{ cluster: KafkaCluster; attempts: () => number }> {
    const k = await kafka();
    const c = new KafkaCluster({ bootstrapServers, retryTimeoutMs, ...(log === undefined ? {} : { log }) });
    let attempts = 0;
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    (c as unknown as { pool: unknown }).pool = {
      getFirstAvailable: () => {
        attempts++;
        return Promise.reject(new k.MultipleErrors('Cannot connect to any broker.', [new k.NetworkError('Connection to 127.0.0.1:1 failed.', { cause: refused })]));
      },
      close: () => Promise.resolve(),
    };
    return { cluster: c, attempts: () => attempts };
  }

  it("KafkaCluster.topic() gives up after retryTimeoutMs, not twice that (its retried metadata request was retried again), and logs once", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const logs: string[] = [];
    const { cluster: c, attempts } = await refusingCluster(60_000, (m) => logs.push(m));
    const start = Date.now();
    let failedAfterMs = -1;
    const done = c.topic('orders').then(
      () => undefined,
      (e: unknown) => {
        failedAfterMs = Date.now() - start;
        return e as Error;
      },
    );
    await vi.runAllTimersAsync();
    const error = await done;
    expect(String(error)).toMatch(/kafka: cannot connect to any broker of 127\.0\.0\.1:1 \(connect ECONNREFUSED 127\.0\.0\.1:1\); check bootstrapServers/);
    expect(attempts()).toBeGreaterThan(10);
    expect(failedAfterMs).toBeGreaterThan(59_000);
    expect(failedAfterMs).toBeLessThanOrEqual(60_000);
    expect(logs).toEqual(['kafka: cannot reach 127.0.0.1:1 yet (ECONNREFUSED); retrying for up to 60 s']);
  });

  it('a request retried inside another retried request shares its deadline', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { cluster: c } = await refusingCluster(10_000);
    const start = Date.now();
    let failedAfterMs = -1;
    const done = c.retrying('produce to orders:0', (deadline) => c.leaderConnection('orders', 0, deadline)).catch(() => {
      failedAfterMs = Date.now() - start;
    });
    await vi.runAllTimersAsync();
    await done;
    expect(failedAfterMs).toBeGreaterThan(9_000);
    expect(failedAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('a broker that is also the bootstrap address is named once (it was "127.0.0.1:1, 127.0.0.1:1")', async () => {
    const logs: string[] = [];
    const c = new KafkaCluster({ bootstrapServers, retryTimeoutMs: 300, log: (m) => logs.push(m) });
    // As after a metadata answer: the broker list holds the bootstrap broker itself.
    (c as unknown as { brokers: Map<number, { host: string; port: number }> }).brokers = new Map([[1, { host: '127.0.0.1', port: 1 }]]);
    try {
      await expect(c.anyConnection()).rejects.toThrow(/^kafka: cannot connect to any broker of 127\.0\.0\.1:1 \(/);
      await expect(c.retrying('metadata', () => c.anyConnection())).rejects.toThrow(/any broker of 127\.0\.0\.1:1 \(/);
    } finally {
      await c.close();
    }
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^kafka: cannot reach 127\.0\.0\.1:1 yet \(ECONNREFUSED\)/);
  });

  it('a real refused connection is logged once with its address and cause (no log function: nothing said)', async () => {
    const logs: string[] = [];
    const c = new KafkaCluster({ bootstrapServers, retryTimeoutMs: 300, log: (m) => logs.push(m) });
    try {
      await expect(c.topic('t')).rejects.toThrow(/kafka: cannot connect to any broker of 127\.0\.0\.1:1 \(connect ECONNREFUSED 127\.0\.0\.1:1\)/);
    } finally {
      await c.close();
    }
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^kafka: cannot reach 127\.0\.0\.1:1 yet \(ECONNREFUSED\); retrying for up to 0\.\d s$/);
  });
});

describe('Kafka option names are checked too (a misspelt one meant its default without a word)', () => {
  it('an unknown name fails the source, the sink and kafkaDeadLetter, naming the closest option and listing them all', () => {
    // groupID: no group, so { committed: true } offsets and offset commits would be refused or skipped.
    expect(() => source({ groupID: 'billing' })).toThrow(/^kafka source: unknown option 'groupID' \(did you mean 'groupId'\?\); its options are bootstrapServers, clientId, .*fetchPartitionMaxBytes$/);
    expect(() => source({ isolation_level: 'read_committed' })).toThrow(/^kafka source: unknown option 'isolation_level' \(did you mean 'isolationLevel'\?\)/);
    // deliverGuarantee: the default 'none' instead of exactly-once.
    expect(() => sink({ deliverGuarantee: 'exactly-once', transactionalIdPrefix: 'p' })).toThrow(/^kafka sink: unknown option 'deliverGuarantee' \(did you mean 'deliveryGuarantee'\?\)/);
    expect(() => sink({ acks: 'all' })).toThrow(/^kafka sink: unknown option 'acks'; its options are bootstrapServers, .*compression$/);
    expect(() => kafkaDeadLetter({ bootstrapServers, topic: 'dlq', idleCloseMS: 10 } as never)).toThrow(/^kafkaDeadLetter: unknown option 'idleCloseMS' \(did you mean 'idleCloseMs'\?\)/);
  });

  it('every documented option name is accepted', () => {
    expect(() =>
      source({
        clientId: 'c', requestTimeoutMs: 1000, retryTimeoutMs: 0, log: () => {}, groupId: 'g', startingOffsets: 'earliest', stoppingOffsets: 'latest',
        isolationLevel: 'read_committed', deserializer: 'json', partitionDiscoveryIntervalMs: 0, commitOffsetsOnCheckpoint: true,
        deadLetter: () => {}, queueRecordsMax: 10, fetchMaxWaitMs: 10, fetchPartitionMaxBytes: 10,
      }),
    ).not.toThrow();
    expect(() => source({ recordDeserializer: (r: unknown) => r })).not.toThrow();
    expect(() =>
      sink({
        clientId: 'c', requestTimeoutMs: 1000, retryTimeoutMs: 0, log: () => {}, deliveryGuarantee: 'exactly-once', transactionalIdPrefix: 'p',
        transactionTimeoutMs: 60_000, key: () => 'k', keySerializer: 'string', value: (v: unknown) => v, valueSerializer: 'json',
        partition: () => 0, headers: () => ({}), deadLetter: { topic: 'dlq' }, batchRecordsMax: 10, compression: 'gzip',
      }),
    ).not.toThrow();
  });

  it('deserializer and recordDeserializer together are refused (recordDeserializer won and deserializer was ignored)', () => {
    expect(() => source({ deserializer: 'json', recordDeserializer: (r: unknown) => r })).toThrow(
      /^kafka source: give deserializer \(the record's value\) or recordDeserializer \(the whole record: key, headers, offset\.\.\.\), not both/,
    );
  });
});
