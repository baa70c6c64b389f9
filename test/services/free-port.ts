import { createServer } from 'node:net';

/** A free loopback port (none of `avoid`), for a service the tests start. */
export async function freePort(avoid: ReadonlySet<number> = new Set()): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (address === null || typeof address === 'string') return reject(new Error('no port'));
        server.close(() => resolve(address.port));
      });
    });
    if (!avoid.has(port)) return port;
  }
}
