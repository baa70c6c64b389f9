import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathForServer, rest, shapeProblem, type RestTarget } from './rest-client.js';

describe('pathForServer', () => {
  it("makes a path relative to this shell absolute (the server resolves it in its own directory); URIs go as they are", () => {
    expect(pathForServer('savepoints/sp-1')).toBe(resolve('savepoints/sp-1'));
    expect(pathForServer('/tmp/sp')).toBe('/tmp/sp');
    expect(pathForServer('s3://bucket/savepoints')).toBe('s3://bucket/savepoints');
    expect(pathForServer('file:///tmp/sp')).toBe('file:///tmp/sp');
  });
});

describe('shapeProblem', () => {
  it('names the first field that is missing or of another type', () => {
    expect(shapeProblem({ jobid: 'x' }, { jobid: 'string' })).toBeUndefined();
    expect(shapeProblem({}, { jobid: 'string' })).toBe("'jobid' is missing, not a string");
    expect(shapeProblem({ jobs: {} }, { jobs: 'array' })).toBe("'jobs' is an object, not an array");
    expect(shapeProblem({ n: null }, { n: 'number' })).toBe("'n' is a null, not a number");
    expect(shapeProblem([1], { n: 'number' })).toBe('it is not a JSON object');
  });

  it('looks into nested objects and every element of arrays, naming the path to the field (the commands read them and threw TypeError or RangeError)', () => {
    const shape = { jobs: [{ jid: 'string', metrics: { 'read-records': 'number' } }] } as const;
    expect(shapeProblem({ jobs: [] }, shape)).toBeUndefined();
    expect(shapeProblem({ jobs: [{ jid: 'a', metrics: { 'read-records': 1 } }] }, shape)).toBeUndefined();
    expect(shapeProblem({ jobs: 5 }, shape)).toBe("'jobs' is a number, not an array");
    expect(shapeProblem({ jobs: [5] }, shape)).toBe("'jobs[0]' is a number, not an object");
    expect(shapeProblem({ jobs: [{ jid: 'a', metrics: { 'read-records': 1 } }, {}] }, shape)).toBe("'jobs[1].jid' is missing, not a string");
    expect(shapeProblem({ jobs: [{ jid: 'a', metrics: [] }] }, shape)).toBe("'jobs[0].metrics' is an array, not an object");
    expect(shapeProblem({ jobs: [{ jid: 'a', metrics: {} }] }, shape)).toBe("'jobs[0].metrics.read-records' is missing, not a number");
    expect(shapeProblem({ ids: [1, '2'] }, { ids: ['number'] })).toBe("'ids[1]' is a string, not a number");
  });
});

describe('rest against a server that is not a Sluice JobManager', () => {
  // Before: the CLI trusted any JSON ("Job undefined submitted", then polling forever) and
  // waited without end for a server that accepted the connection but never answered.
  let server: Server;
  let target: RestTarget;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/silent') return; // never answers
      if (req.url === '/html') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
        return;
      }
      if (req.url === '/error') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: ['Job abc not found.'] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    target = { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: undefined };
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('a body without the expected fields names the field and the address', async () => {
    await expect(rest(target, 'POST', '/jobs', {}, { jobid: 'string' })).rejects.toThrow(
      new RegExp(`POST /jobs: the answer of ${target.baseUrl} is not what a Sluice JobManager sends \\('jobid' is missing, not a string\\); is --jobmanager the right address`),
    );
  });

  it('a body that is not JSON', async () => {
    await expect(rest(target, 'GET', '/html')).rejects.toThrow(/GET \/html: the server at http:\/\/127\.0\.0\.1:\d+ answered 200 with a body that is not JSON; is it a Sluice JobManager\?/);
  });

  it("an error status carries the server's errors", async () => {
    await expect(rest(target, 'GET', '/error')).rejects.toThrow('GET /error: 404 Job abc not found.');
  });

  it('no answer within the timeout', async () => {
    await expect(rest(target, 'GET', '/silent', undefined, undefined, 300)).rejects.toThrow(/GET \/silent: the REST API at http:\/\/127\.0\.0\.1:\d+ did not answer within 0\.3 s/);
  });
});
