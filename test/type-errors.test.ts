/**
 * What a user reads when a job does not compile: snippets compiled with the TypeScript
 * compiler as a job is (the project's tsconfig, strict), and the text of their diagnostics.
 * The type tests (*.test-d.ts) pin that these snippets fail; this pins that the message names
 * the types involved, or the fix when an output type could not be inferred.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const prelude = `
import { AsyncDataStream, StreamExecutionEnvironment, TumblingEventTimeWindows, type AggregateFunction, type Collector } from '../src/index.js';
import { PrintSink } from '../src/connectors/index.js';
interface Bid { auction: number; bidder: string; price: number }
const env = StreamExecutionEnvironment.create();
const bids = env.fromElements<Bid>({ auction: 1, bidder: 'a', price: 10 });
const sum: AggregateFunction<Bid, number, number> = { createAccumulator: () => 0, add: (b, n) => n + b.price, getResult: (n) => n };
const windowed = bids.keyBy((b) => b.bidder).window(TumblingEventTimeWindows.of(1_000));
export { AsyncDataStream, PrintSink, sum, windowed, type Collector };
`;

/** Each snippet is a module of its own after the prelude. */
const snippets = {
  compiles: `
    windowed.aggregate(sum, (bidder, ctx, total) => ({ bidder, end: ctx.window.end, total })).sinkTo(new PrintSink<{ bidder: string; end: number; total: number }>());
    windowed.aggregate(sum, { process: (bidder, _ctx, [total], out: Collector<string>) => out.collect(bidder + total) }).sinkTo(new PrintSink<string>());
    bids.process<number>({ processElement: (b, _ctx, out) => out.collect(b.price) }).sinkTo(new PrintSink<number>());
  `,
  wrongSink: `bids.map((b) => b.price).sinkTo(new PrintSink<string>());`,
  processNotInferred: `bids.process({ processElement: (b, _ctx, out) => out.collect(b.price) });`,
  windowNotInferred: `windowed.aggregate(sum, { process(bidder, ctx, [total], out) { out.collect({ bidder, end: ctx.window.end, total }); } });`,
  asyncNotInferred: `AsyncDataStream.orderedWait(bids, (b, result) => result.complete([b.price]), 1_000);`,
} as const;

type Name = keyof typeof snippets;

/** The diagnostics of each snippet, flattened to text. */
function compile(): Record<Name, string[]> {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const options: ts.CompilerOptions = { ...ts.parseJsonConfigFileContent(config.config, ts.sys, root).options, noEmit: true };
  const files = new Map(Object.entries(snippets).map(([name, body]) => [join(root, 'test', `__${name}.snippet.ts`), `${prelude}\n${body}\n`]));
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) => {
    const text = files.get(f);
    return text === undefined ? getSourceFile.call(host, f, language, ...rest) : ts.createSourceFile(f, text, language);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const result = {} as Record<Name, string[]>;
  for (const [name, path] of Object.keys(snippets).map((n, i) => [n as Name, [...files.keys()][i]!] as const)) {
    result[name] = ts.getPreEmitDiagnostics(program, program.getSourceFile(path)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
  return result;
}

describe('compile errors name the types, or the fix', () => {
  let diagnostics: Record<Name, string[]>;
  // Type-checks most of src/ (about 12 s alone on a quiet machine).
  beforeAll(() => {
    diagnostics = compile();
  }, 180_000);

  it('a snippet that is right compiles (the harness resolves the imports)', () => {
    expect(diagnostics.compiles).toEqual([]);
  });

  it('a sink of another type: the message names the sink and the stream type', () => {
    expect(diagnostics.wrongSink).toHaveLength(1);
    expect(diagnostics.wrongSink[0]).toContain("Argument of type 'PrintSink<string>' is not assignable to parameter of type 'Sink<number>'");
  });

  it('a process function whose output type is not inferred: out.collect names the fix', () => {
    expect(diagnostics.processNotInferred).toHaveLength(1);
    expect(diagnostics.processNotInferred[0]).toContain("Argument of type 'number' is not assignable to parameter of type");
    expect(diagnostics.processNotInferred[0]).toContain('output type not inferred');
    expect(diagnostics.processNotInferred[0]).toContain('give it as process<Out>(...), or annotate out: Collector<Out>');
  });

  it("the issue's window function: the message offers the returning form", () => {
    expect(diagnostics.windowNotInferred).toHaveLength(1);
    expect(diagnostics.windowNotInferred[0]).toContain("Argument of type '{ bidder: string; end: number; total: number; }' is not assignable");
    expect(diagnostics.windowNotInferred[0]).toContain('annotate out: Collector<Out>, or return the one result: (key, ctx, result) => output');
  });

  it('async I/O: result.complete names the fix', () => {
    expect(diagnostics.asyncNotInferred).toHaveLength(1);
    expect(diagnostics.asyncNotInferred[0]).toContain('give both types as orderedWait<In, Out>(...), or annotate the result future: (input, result: ResultFuture<Out>)');
  });
});
