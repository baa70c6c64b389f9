import { checkKnownOptions } from '../util/known-options.js';
import type { Sink, SinkWriter } from '../api/sink.js';

export interface PrintSinkOptions<T = unknown> {
  /** Printed before each record, as Flink's print(sinkIdentifier). */
  readonly prefix?: string;
  /** Write to stderr instead of stdout. */
  readonly stderr?: boolean;
  readonly format?: (value: T) => string;
}

function defaultFormat(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

const PRINT_OPTION_NAMES = { prefix: true, stderr: true, format: true } as const satisfies Record<keyof PrintSinkOptions, true>;

/** Prints records, one per line, prefixed like Flink's `subtask> record` when parallel. */
export class PrintSink<T> implements Sink<T> {
  constructor(private readonly options: PrintSinkOptions<T> = {}) {
    checkKnownOptions('print sink', options, PRINT_OPTION_NAMES);
    if (options.format !== undefined && typeof options.format !== 'function') throw new TypeError(`print sink: format must be a function (record) => text, got ${typeof options.format}`);
  }

  createWriter(ctx: { subtaskIndex: number; parallelism: number }): SinkWriter<T> {
    const stream = this.options.stderr === true ? process.stderr : process.stdout;
    const format: (value: T) => string = this.options.format ?? defaultFormat;
    const parts = [this.options.prefix, ctx.parallelism > 1 ? String(ctx.subtaskIndex + 1) : undefined].filter((p) => p !== undefined);
    const prefix = parts.length > 0 ? `${parts.join(':')}> ` : '';
    let buffer: string[] = [];
    let scheduled = false;
    const flush = (): void | Promise<void> => {
      scheduled = false;
      if (buffer.length === 0) return;
      const text = buffer.join('');
      buffer = [];
      if (!stream.write(text)) return new Promise<void>((resolve) => stream.once('drain', () => resolve()));
    };
    return {
      write: (value) => {
        buffer.push(prefix + format(value) + '\n');
        if (buffer.length >= 256) return flush();
        if (!scheduled) {
          // Print what arrived during this turn of the event loop together, soon.
          scheduled = true;
          setImmediate(() => void flush());
        }
      },
      flush: () => flush(),
    };
  }
}
