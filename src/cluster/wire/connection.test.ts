import { createServer, connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { Connection } from './connection.js';

type Msg = { n: number };

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

describe('Connection', () => {
  it('sends the messages of one turn in one write, in order, and those of the next turn after them', async () => {
    const [a, b] = await pair();
    const received: number[] = [];
    b.onMessage((m) => received.push(m.n));
    // Count the writes the stream hands to the socket: one writev for a corked turn.
    const stream = a.socket as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
    let writes = 0;
    for (const name of ['_write', '_writev'] as const) {
      const original = stream[name].bind(stream);
      stream[name] = (...args: unknown[]) => {
        writes++;
        original(...args);
      };
    }
    for (let n = 0; n < 50; n++) a.send({ n });
    await new Promise((r) => setImmediate(r));
    expect(writes).toBe(1);
    for (let n = 50; n < 60; n++) a.send({ n });
    while (received.length < 60) await new Promise((r) => setTimeout(r, 5));
    expect(writes).toBe(2);
    expect(received).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });
});
