import { createServer, connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { Connection, flushCorkedWrites } from './connection.js';

type Msg = { t: 'n'; n: number };

const sockets: Socket[] = [];
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) s.close();
});

async function pair(): Promise<[Connection<Msg, Msg>, Connection<Msg, Msg>]> {
  const server = createServer();
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect((server.address() as { port: number }).port, '127.0.0.1');
  await once(client, 'connect');
  const [serverSide] = await accepted;
  sockets.push(client, serverSide);
  return [new Connection<Msg, Msg>(client, 'client'), new Connection<Msg, Msg>(serverSide, 'server')];
}

/** Counts the writes the stream hands to the socket (one writev for a corked run of frames). */
function countWrites(connection: Connection<Msg, Msg>): { count: number } {
  const stream = connection.socket as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
  const writes = { count: 0 };
  for (const name of ['_write', '_writev'] as const) {
    const original = stream[name].bind(stream);
    stream[name] = (...args: unknown[]) => {
      writes.count++;
      original(...args);
    };
  }
  return writes;
}

describe('Connection', () => {
  it('sends the messages of one turn in one write, in order, and those of the next turn after them', async () => {
    const [a, b] = await pair();
    const received: number[] = [];
    b.onMessage((m) => received.push(m.n));
    const counted = countWrites(a);
    const writes = (): number => counted.count;
    for (let n = 0; n < 50; n++) a.send({ t: 'n', n });
    await new Promise((r) => setImmediate(r));
    expect(writes()).toBe(1);
    for (let n = 50; n < 60; n++) a.send({ t: 'n', n });
    while (received.length < 60) await new Promise((r) => setTimeout(r, 5));
    expect(writes()).toBe(2);
    expect(received).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it('flushCorkedWrites writes out what every connection holds corked, at once, not on the next tick', async () => {
    const [a, b] = await pair();
    const [c, d] = await pair();
    const received: number[] = [];
    b.onMessage((m) => received.push(m.n));
    d.onMessage((m) => received.push(m.n));
    const writesA = countWrites(a);
    const writesC = countWrites(c);
    for (let n = 0; n < 10; n++) a.send({ t: 'n', n });
    c.send({ t: 'n', n: 10 });
    expect([writesA.count, writesC.count]).toEqual([0, 0]);
    flushCorkedWrites();
    expect([writesA.count, writesC.count], 'written in the same tick').toEqual([1, 1]);
    for (let n = 11; n < 20; n++) a.send({ t: 'n', n });
    flushCorkedWrites();
    expect(writesA.count).toBe(2);
    while (received.length < 20) await new Promise((r) => setTimeout(r, 5));
    expect(writesA.count, 'nothing left for the next tick').toBe(2);
    expect([...received].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('a handler that throws closes the connection with the error, instead of throwing out of the socket', async () => {
    const [a, b] = await pair();
    let closedWith: Error | undefined;
    b.onClose((e) => (closedWith = e));
    b.onMessage((m) => {
      if (m.n === 2) throw new TypeError('bad field');
    });
    for (let n = 0; n < 4; n++) a.send({ t: 'n', n });
    while (!b.closed) await new Promise((r) => setTimeout(r, 5));
    expect(closedWith?.message).toBe("server: handling a 'n' message failed: bad field");
  });
});
