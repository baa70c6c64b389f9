/**
 * Dead letters: records the Kafka connectors could not deserialize or serialize, sent to a
 * dead-letter output instead of failing the job. The headers name where the record came from
 * and the error (like Kafka Connect's `__connect.errors.*` headers).
 */

/** Headers of a dead letter: `sluice.dlq.topic`, `.partition`, `.offset`, `.timestamp` (where the record was read; source only) and `sluice.dlq.error`. */
export function deadLetterHeaders(from: { topic: string; partition: number; offset: bigint; timestampMs: number } | undefined, error: Error): [string, string][] {
  const out: [string, string][] = [];
  if (from !== undefined) {
    out.push(['sluice.dlq.topic', from.topic], ['sluice.dlq.partition', String(from.partition)], ['sluice.dlq.offset', from.offset.toString()], ['sluice.dlq.timestamp', String(from.timestampMs)]);
  }
  out.push(['sluice.dlq.error', error.message]);
  return out;
}

/** A JSON envelope for an element a sink could not serialize: `{"error": ..., "record": ...}` (the element as JSON, or as a string when JSON fails). */
export function deadLetterEnvelope(value: unknown, error: Error): Buffer {
  let record: unknown;
  try {
    record = JSON.parse(JSON.stringify(value, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) ?? 'null');
  } catch {
    record = String(value);
  }
  return Buffer.from(JSON.stringify({ error: error.message, record }), 'utf8');
}
