import { describe, expect, it } from 'vitest';
import { PrintSink } from '../src/connectors/print-sink.js';

describe('PrintSink options', () => {
  it('a misspelt option name or a format that is not a function is refused by the constructor', () => {
    expect(() => new PrintSink({ prefx: 'out' } as never)).toThrow(/^print sink: unknown option 'prefx' \(did you mean 'prefix'\?\); its options are prefix, stderr, format$/);
    expect(() => new PrintSink({ format: 'json' } as never)).toThrow(/^print sink: format must be a function \(record\) => text, got string$/);
    expect(() => new PrintSink({ prefix: 'out', stderr: true, format: String })).not.toThrow();
  });
});
