import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricRegistry } from './metric-registry.js';
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from './prometheus-format.js';

/**
 * `/metrics` alone, for a process without the REST API (a TaskManager): the registry in
 * Prometheus' text format. Binds to 127.0.0.1 unless told otherwise; resolves with the URL.
 */
export async function serveMetrics(registry: MetricRegistry, o: { port?: number; address?: string } = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('only GET /metrics here\n');
      return;
    }
    const text = renderPrometheus(registry.collect());
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  const address = o.address ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, address, () => resolve());
  });
  registry.start();
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`,
    close: async () => {
      registry.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
