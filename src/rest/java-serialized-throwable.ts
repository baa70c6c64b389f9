/**
 * A job's failure cause as Flink's REST API carries it (`failure-cause` of
 * `/jobs/:id/execution-result` and of operation results): `class`, `stack-trace` and
 * `serialized-throwable`, the latter a Java-serialized `org.apache.flink.util.SerializedThrowable`
 * in base64. Flink's clients read only that last field (SerializedThrowableDeserializer
 * deserializes it with Java serialization), so it is written here byte for byte in the Java
 * Object Serialization Stream Protocol: the object, its class descriptors
 * (SerializedThrowable -> Exception -> Throwable) and its fields. The original exception's bytes
 * (`serializedException`) stay null: a client then gets the SerializedThrowable itself as the
 * cause, with the original class name, message and stack trace as text (what Flink's client does
 * with an exception class it cannot load).
 */

const STREAM_MAGIC = 0xaced;
const STREAM_VERSION = 5;
const TC_NULL = 0x70;
const TC_CLASSDESC = 0x72;
const TC_OBJECT = 0x73;
const TC_STRING = 0x74;
const TC_ENDBLOCKDATA = 0x78;
const TC_LONGSTRING = 0x7c;
const SC_WRITE_METHOD = 0x01;
const SC_SERIALIZABLE = 0x02;

/** The serialVersionUIDs of the classes written (the same in Flink 1.x and 2.x, and in the JDK since 1.0). */
const SERIALIZED_THROWABLE_UID = 7284183123441947635n;
const EXCEPTION_UID = -3387516993124229948n;
const THROWABLE_UID = -3042686055658047285n;

class JavaStreamWriter {
  private readonly chunks: Buffer[] = [];

  u8(v: number): void {
    this.chunks.push(Buffer.from([v]));
  }

  u16(v: number): void {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    this.chunks.push(b);
  }

  i64(v: bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    this.chunks.push(b);
  }

  /** Java's modified UTF-8 with a 2-byte length (class and field names). */
  utf(s: string): void {
    const bytes = modifiedUtf8(s);
    if (bytes.length > 0xffff) throw new Error(`a Java UTF string holds at most 65535 bytes, got ${bytes.length}`);
    this.u16(bytes.length);
    this.chunks.push(bytes);
  }

  /** A new String object (TC_STRING, or TC_LONGSTRING past 65535 bytes); no back references are written. */
  string(s: string | null): void {
    if (s === null) return this.u8(TC_NULL);
    const bytes = modifiedUtf8(s);
    if (bytes.length <= 0xffff) {
      this.u8(TC_STRING);
      this.u16(bytes.length);
    } else {
      this.u8(TC_LONGSTRING);
      this.i64(BigInt(bytes.length));
    }
    this.chunks.push(bytes);
  }

  /** A class descriptor whose fields are all object fields: [type code, name, JVM type signature]. */
  classDesc(name: string, uid: bigint, flags: number, fields: readonly (readonly [string, string, string])[]): void {
    this.u8(TC_CLASSDESC);
    this.utf(name);
    this.i64(uid);
    this.u8(flags);
    this.u16(fields.length);
    for (const [code, fieldName, signature] of fields) {
      this.u8(code.charCodeAt(0));
      this.utf(fieldName);
      this.string(signature);
    }
    this.u8(TC_ENDBLOCKDATA); // no class annotation
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Java's modified UTF-8: NUL and each UTF-16 code unit above 0x7f in 2 or 3 bytes. */
export function modifiedUtf8(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x01 && c <= 0x7f) out.push(c);
    else if (c <= 0x7ff) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(out);
}

/**
 * The Java serialization of a SerializedThrowable with `message` as its message,
 * `originalClassName` as the original exception's class and `stackTrace` as its full text.
 */
export function javaSerializedThrowable(originalClassName: string, message: string, stackTrace: string): Buffer {
  const w = new JavaStreamWriter();
  w.u16(STREAM_MAGIC);
  w.u16(STREAM_VERSION);
  w.u8(TC_OBJECT);
  // Class descriptors, the class itself first, then its serializable superclasses.
  w.classDesc('org.apache.flink.util.SerializedThrowable', SERIALIZED_THROWABLE_UID, SC_SERIALIZABLE, [
    ['L', 'fullStringifiedStackTrace', 'Ljava/lang/String;'],
    ['L', 'originalErrorClassName', 'Ljava/lang/String;'],
    ['[', 'serializedException', '[B'],
  ]);
  w.classDesc('java.lang.Exception', EXCEPTION_UID, SC_SERIALIZABLE, []);
  w.classDesc('java.lang.Throwable', THROWABLE_UID, SC_SERIALIZABLE | SC_WRITE_METHOD, [
    ['L', 'cause', 'Ljava/lang/Throwable;'],
    ['L', 'detailMessage', 'Ljava/lang/String;'],
    ['[', 'stackTrace', '[Ljava/lang/StackTraceElement;'],
    ['L', 'suppressedExceptions', 'Ljava/util/List;'],
  ]);
  w.u8(TC_NULL); // Throwable's superclass (Object) is not serializable
  // Field values, the topmost serializable class first. Throwable.readObject takes a null
  // stack trace and null suppressed exceptions as "none".
  w.u8(TC_NULL); // cause
  w.string(message); // detailMessage
  w.u8(TC_NULL); // stackTrace
  w.u8(TC_NULL); // suppressedExceptions
  w.u8(TC_ENDBLOCKDATA); // end of Throwable.writeObject's data
  // Exception has no fields; SerializedThrowable's:
  w.string(stackTrace);
  w.string(originalClassName);
  w.u8(TC_NULL); // serializedException
  return w.bytes();
}

/** Flink's JSON of a SerializedThrowable (SerializedThrowableSerializer). */
export function serializedThrowableJson(error: { readonly className: string; readonly message: string; readonly stackTrace: string }): Record<string, string> {
  return {
    class: error.className,
    'stack-trace': error.stackTrace,
    'serialized-throwable': javaSerializedThrowable(error.className, error.message, error.stackTrace).toString('base64'),
  };
}
