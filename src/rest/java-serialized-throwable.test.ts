import { describe, expect, it } from 'vitest';
import { javaSerializedThrowable, modifiedUtf8, serializedThrowableJson } from './java-serialized-throwable.js';

// Flink's client deserializes these bytes (checked against Flink's own classes by
// test/flink-compat.test.ts, a failed job's cause); here the encoding's corners.
describe('a failure cause as a Java-serialized SerializedThrowable', () => {
  it("Java's modified UTF-8: NUL in two bytes, each UTF-16 unit of a surrogate pair in three", () => {
    expect([...modifiedUtf8('a\u0000é€')]).toEqual([0x61, 0xc0, 0x80, 0xc3, 0xa9, 0xe2, 0x82, 0xac]);
    expect(modifiedUtf8('😀').length).toBe(6);
  });

  it('a stream of one SerializedThrowable object, its message and stack trace as strings', () => {
    const b = javaSerializedThrowable('java.lang.Error', 'boom', 'Error: boom\n  at x');
    expect(b.subarray(0, 5)).toEqual(Buffer.from([0xac, 0xed, 0x00, 0x05, 0x73]));
    expect(b.includes(Buffer.from('org.apache.flink.util.SerializedThrowable'))).toBe(true);
    expect(b.includes(Buffer.from('Error: boom\n  at x'))).toBe(true);
    expect(b.at(-1)).toBe(0x70); // serializedException: null
  });

  it('a stack trace past 65535 bytes is written as a long string (TC_LONGSTRING, 8-byte length)', () => {
    const stack = 'x'.repeat(70_000);
    const b = javaSerializedThrowable('Error', 'm', stack);
    const at = b.indexOf(Buffer.from(stack));
    expect(b[at - 9]).toBe(0x7c);
    expect(b.readBigInt64BE(at - 8)).toBe(70_000n);
  });

  it("Flink's JSON: class, stack-trace and the bytes in base64", () => {
    const j = serializedThrowableJson({ className: 'Error', message: 'm', stackTrace: 'Error: m' });
    expect(j.class).toBe('Error');
    expect(j['stack-trace']).toBe('Error: m');
    expect(Buffer.from(j['serialized-throwable']!, 'base64')).toEqual(javaSerializedThrowable('Error', 'm', 'Error: m'));
  });
});
