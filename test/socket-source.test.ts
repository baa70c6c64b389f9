import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StreamExecutionEnvironment } from '../src/index.js';
import { CollectSink } from '../src/connectors/collect-sink.js';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A TCP server on a free loopback port; `onConnection` gets each accepted socket and its number (0, 1, ...). */
async function serve(onConnection: (socket: Socket, n: number) => void): Promise<number> {
  let n = 0;
  const server = createServer((socket) => onConnection(socket, n++));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Writes `chunks` one after the other, each after the previous was flushed, then ends. */
async function writeChunks(socket: Socket, chunks: readonly (string | Buffer)[]): Promise<void> {
  for (const c of chunks) await new Promise<void>((resolve) => socket.write(c, () => resolve()));
  socket.end();
}

describe('socketTextStream', () => {
  it('reads lines split anywhere over the wire (multi-byte characters, \\r\\n, a last line without delimiter) and ends with the connection', async () => {
    const text = 'héllo wörld\r\nsecond line\n\nπ ≈ 3.14159\nlast without newline';
    const bytes = Buffer.from(text, 'utf8');
    // Cut inside multi-byte characters and between \r and \n.
    const cuts = [1, 2, 3, 12, 13, 20, 30, 31, bytes.length];
    const chunks: Buffer[] = [];
    let from = 0;
    for (const c of cuts) {
      chunks.push(bytes.subarray(from, c));
      from = c;
    }
    const port = await serve((socket) => void writeChunks(socket, chunks));
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<string>();
    env.socketTextStream('127.0.0.1', port).sinkTo(sink).setParallelism(1);
    await env.execute();
    expect(sink.values).toEqual(['héllo wörld', 'second line', '', 'π ≈ 3.14159', 'last without newline']);
  });

  it('word count over 100,000 lines: the reader pauses the socket while its queue is full and loses nothing', async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `w${i % 37} w${(i * 7) % 11} x`);
    const port = await serve((socket) => {
      // Large writes, as fast as the socket takes them.
      const batch = 5_000;
      const chunks: string[] = [];
      for (let i = 0; i < lines.length; i += batch) chunks.push(lines.slice(i, i + batch).join('\n') + '\n');
      void writeChunks(socket, chunks);
    });
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 2 });
    const sink = new CollectSink<[string, number]>();
    env
      .socketTextStream('127.0.0.1', port)
      .flatMap<[string, number]>((line, out) => {
        for (const w of line.split(' ')) out.collect([w, 1]);
      })
      .keyBy((t) => t[0])
      .sum(1)
      .sinkTo(sink);
    await env.execute();
    const want = new Map<string, number>();
    for (const l of lines) for (const w of l.split(' ')) want.set(w, (want.get(w) ?? 0) + 1);
    const last = new Map<string, number>();
    for (const [w, n] of sink.values) last.set(w, Math.max(last.get(w) ?? 0, n));
    expect(last).toEqual(want);
    expect(sink.values.length).toBe(300_000);
  });

  it('with maxRetry, reconnects when the server closes the connection and reads the next one too', async () => {
    const port = await serve((socket, n) => void writeChunks(socket, n === 0 ? ['a\nb\n'] : ['c\nd']));
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const sink = new CollectSink<string>();
    env.socketTextStream('127.0.0.1', port, '\n', 1).sinkTo(sink);
    await env.execute();
    expect(sink.values).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a custom delimiter', async () => {
    const port = await serve((socket) => void writeChunks(socket, ['one|tw', 'o||three|']));
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    const sink = new CollectSink<string>();
    env.socketTextStream('127.0.0.1', port, '|').sinkTo(sink);
    await env.execute();
    expect(sink.values).toEqual(['one', 'two', '', 'three']);
  });

  it('no server listening fails the job with an error that says where and how to start one', async () => {
    const port = await serve(() => {});
    servers.pop()!.close(); // a port nobody listens on any more
    await new Promise((r) => setTimeout(r, 20));
    const env = StreamExecutionEnvironment.create({ 'parallelism.default': 1 });
    env.socketTextStream('127.0.0.1', port).sinkTo(new CollectSink<string>());
    await expect(env.execute()).rejects.toThrow(new RegExp(`connection to 127\\.0\\.0\\.1:${port} failed \\(ECONNREFUSED\\).*nc -lk ${port}`));
  });

  it('its parallelism stays 1; bad arguments are refused', () => {
    const env = StreamExecutionEnvironment.create();
    expect(() => env.socketTextStream('localhost', 9999).setParallelism(2)).toThrow(/socketTextStream reads one connection/);
    expect(() => env.socketTextStream('localhost', 70000)).toThrow(/port must be an integer in \[1, 65535\]/);
    expect(() => env.socketTextStream('', 9999)).toThrow(/host must be a non-empty string/);
    expect(() => env.socketTextStream('localhost', 9999, '')).toThrow(/delimiter must not be empty/);
  });
});
