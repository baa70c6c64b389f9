/**
 * Runs every job in examples/ the way a user does (`sluice run`) and checks what it printed or
 * wrote against a result computed here, independently of the runtime. The documentation in
 * docs/ quotes these examples, so this file also keeps the docs honest.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTIONS } from '../src/config/options.js';
import { machineServer, sql, uniqueTableName, type PostgresServer } from './services/postgres-cluster.js';
import { nexmarkEventAt, nexmarkTimestampAt, resolveNexmarkConfig } from '../src/connectors/index.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `sluice run --no-progress <args>`; the examples are bounded and end on their own. */
function sluiceRun(...args: string[]): Run {
  const r = spawnSync(process.execPath, ['bin/sluice.js', 'run', '--no-progress', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function expectFinished(r: Run): void {
  if (r.code !== 0) throw new Error(`sluice run exited with ${r.code}:\n${r.stderr}`);
  expect(r.stderr).toMatch(/^Job [0-9a-f]{32} finished in \d+ ms/m);
}

/** stdout lines, without the `N> ` prefix a parallel print sink adds. */
function lines(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.replace(/^\d+> /, ''));
}

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

const tempDirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sluice-examples-'));
  tempDirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

const hhmmss = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const hhmmssms = (ms: number): string => new Date(ms).toISOString().slice(11, 23);

const TESTED = new Set<string>();

// ---------------------------------------------------------------------------------------------

describe('examples/word-count.ts', () => {
  TESTED.add('word-count.ts');
  const words = (line: string): string[] => line.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];

  /** A rolling count prints `w,1` .. `w,n` for a word seen n times, in that order. */
  function expectRollingCounts(output: string[], text: readonly string[]): void {
    const totals = new Map<string, number>();
    for (const l of text) for (const w of words(l)) totals.set(w, (totals.get(w) ?? 0) + 1);
    const expected: string[] = [];
    for (const [w, n] of totals) for (let i = 1; i <= n; i++) expected.push(`${w},${i}`);
    expect(sorted(output)).toEqual(sorted(expected));
    // per word, the counts come out in increasing order (one subtask owns a word)
    const last = new Map<string, number>();
    for (const l of output) {
      const i = l.lastIndexOf(',');
      const w = l.slice(0, i);
      const c = Number(l.slice(i + 1));
      expect(c).toBe((last.get(w) ?? 0) + 1);
      last.set(w, c);
    }
  }

  it('counts the built-in text', () => {
    const r = sluiceRun('examples/word-count.ts');
    expectFinished(r);
    expectRollingCounts(lines(r.stdout), [
      'To be, or not to be, that is the question:',
      'Whether tis nobler in the mind to suffer',
      'The slings and arrows of outrageous fortune,',
      'Or to take arms against a sea of troubles',
      'And by opposing end them.',
    ]);
    expect(r.stdout).toMatch(/^to,4$/m);
  });

  it('counts a file with parallelism 2 (lines prefixed by the printing subtask)', () => {
    const text = ['the quick brown fox', 'jumps over the lazy dog\r', '', 'The DOG sleeps; the fox runs.', 'café, café, naïve 42', 'no newline at the end'];
    const file = join(tempDir(), 'input.txt');
    writeFileSync(file, text.join('\n'));
    const r = sluiceRun('--no-typecheck', '-p', '2', 'examples/word-count.ts', file);
    expectFinished(r);
    const raw = r.stdout.split('\n').filter((l) => l.length > 0);
    expect(raw.every((l) => /^[12]> /.test(l))).toBe(true);
    expectRollingCounts(lines(r.stdout), text);
  });
});

// ---------------------------------------------------------------------------------------------

describe('examples/event-time-windows.ts', () => {
  TESTED.add('event-time-windows.ts');
  const START = Date.UTC(2024, 0, 1);
  const OUT_OF_ORDERNESS = 1000;
  const SIZE = 10_000;
  const LATENESS = 2000;

  function reading(i: number): { sensor: string; value: number; ts: number } {
    let ts = START + 5000 + i * 250 - ((i * 7919) % 800);
    if (i % 23 === 22) ts -= 6000;
    return { sensor: `sensor-${i % 3}`, value: (i * 37) % 100, ts };
  }

  /**
   * Flink's window semantics replayed by hand: the watermark after each reading is the
   * largest timestamp so far minus the bound minus 1; a reading is late for its window when
   * end - 1 + lateness <= watermark; a window fires when the watermark reaches end - 1, and
   * fires again for each reading that arrives after that within the allowed lateness.
   */
  function expected(count: number): string[] {
    const out: string[] = [];
    const contents = new Map<string, { sensor: string; start: number; values: number[] }>();
    const waitingForTimer = new Set<string>();
    const emit = (id: string): void => {
      const w = contents.get(id)!;
      out.push(`${w.sensor} ${hhmmss(w.start)}-${hhmmss(w.start + SIZE)} count=${w.values.length} min=${Math.min(...w.values)} max=${Math.max(...w.values)}`);
    };
    let watermark = Number.MIN_SAFE_INTEGER;
    let maxTs = Number.MIN_SAFE_INTEGER;
    for (let i = 0; i < count; i++) {
      const r = reading(i);
      const start = r.ts - (r.ts % SIZE);
      const end = start + SIZE;
      const id = `${r.sensor}@${start}`;
      if (end - 1 + LATENESS <= watermark) {
        out.push(`late ${r.sensor} ${hhmmssms(r.ts)} value=${r.value}`);
      } else {
        const w = contents.get(id) ?? { sensor: r.sensor, start, values: [] };
        contents.set(id, w);
        w.values.push(r.value);
        if (end - 1 <= watermark) emit(id);
        else waitingForTimer.add(id);
      }
      maxTs = Math.max(maxTs, r.ts);
      watermark = Math.max(watermark, maxTs - OUT_OF_ORDERNESS - 1);
      for (const w of [...waitingForTimer]) {
        if (contents.get(w)!.start + SIZE - 1 <= watermark) {
          waitingForTimer.delete(w);
          emit(w);
        }
      }
    }
    for (const w of waitingForTimer) emit(w); // the final watermark at the end of the input
    return out;
  }

  it('prints window results, late firings and late readings (400 readings)', () => {
    const r = sluiceRun('examples/event-time-windows.ts');
    expectFinished(r);
    const want = expected(400);
    expect(sorted(lines(r.stdout))).toEqual(sorted(want));
    // the data exercises all three cases: on time, late within the lateness, too late
    expect(want.filter((l) => l.startsWith('late ')).length).toBeGreaterThan(0);
    const windows = want.filter((l) => !l.startsWith('late ')).map((l) => l.split(' count=')[0]);
    expect(new Set(windows).size).toBeLessThan(windows.length); // some windows fired twice
  });

  it('gives the same result with parallel windows (-p 3, 2000 readings)', () => {
    const r = sluiceRun('--no-typecheck', '-p', '3', 'examples/event-time-windows.ts', '2000');
    expectFinished(r);
    expect(sorted(lines(r.stdout))).toEqual(sorted(expected(2000)));
  });
});

// ---------------------------------------------------------------------------------------------

describe('examples/sessions.ts', () => {
  TESTED.add('sessions.ts');
  const START = Date.UTC(2024, 0, 1);
  const GAP = 5000;
  const USERS = ['ann', 'ann', 'bob', 'cem', 'bob', 'dee', 'ann', 'cem', 'cem', 'bob'];
  const PAGES = ['home', 'search', 'item', 'cart', 'checkout'];

  /** A session goes on while the next click is at most one gap after the last one. */
  function expected(count: number): string[] {
    const out: string[] = [];
    const open = new Map<string, { start: number; last: number; clicks: number; pages: Set<string> }>();
    const close = (user: string): void => {
      const s = open.get(user)!;
      out.push(`${user} ${hhmmss(s.start)}-${hhmmss(s.last + GAP)} clicks=${s.clicks} pages=${[...s.pages].sort().join(',')}`);
      open.delete(user);
    };
    for (let i = 0; i < count; i++) {
      const block = Math.floor(i / 5);
      const user = USERS[block % USERS.length]!;
      const page = PAGES[(block + Math.floor((i % 5) / 2)) % PAGES.length]!;
      const ts = START + i * 2000;
      const s = open.get(user);
      if (s !== undefined && ts > s.last + GAP) close(user);
      const cur = open.get(user) ?? { start: ts, last: ts, clicks: 0, pages: new Set<string>() };
      cur.last = ts;
      cur.clicks++;
      cur.pages.add(page);
      open.set(user, cur);
    }
    for (const user of [...open.keys()]) close(user);
    return out;
  }

  it('prints one line per session', () => {
    const r = sluiceRun('examples/sessions.ts');
    expectFinished(r);
    const want = expected(200);
    expect(lines(r.stdout)).toHaveLength(want.length);
    expect(sorted(lines(r.stdout))).toEqual(sorted(want));
    expect(r.stdout).toContain('ann 00:00:00-00:00:23 clicks=10 pages=cart,home,item,search');
  });

  it('gives the same sessions with parallelism 2', () => {
    const r = sluiceRun('--no-typecheck', '-p', '2', 'examples/sessions.ts', '1000');
    expectFinished(r);
    expect(sorted(lines(r.stdout))).toEqual(sorted(expected(1000)));
  });
});

// ---------------------------------------------------------------------------------------------

describe('examples/checkpointed-count.ts', () => {
  TESTED.add('checkpointed-count.ts');

  function committedLines(out: string): string[] {
    const dir = join(out, 'committed');
    return readdirSync(dir).flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter((l) => l.length > 0));
  }

  function reference(numbers: number): string[] {
    const counts = new Map<number, number>();
    const out: string[] = [];
    for (let n = 0; n < numbers; n++) {
      const c = (counts.get(n % 10) ?? 0) + 1;
      counts.set(n % 10, c);
      out.push(`${n % 10},${c}`);
    }
    return out;
  }

  it('commits every count exactly once through an injected failure (-p 2, filesystem checkpoints)', () => {
    const out = tempDir();
    const checkpoints = tempDir();
    const r = sluiceRun('-p', '2', '-D', `execution.checkpointing.dir=${checkpoints}`, 'examples/checkpointed-count.ts', out, '20000', '12000');
    expectFinished(r);
    expect(r.stderr).toMatch(/failed: injected failure at number 12000; restarting in 100 ms \(restart 1 of 3\)$/m);
    const got = committedLines(out);
    expect(got.length).toBe(20_000);
    expect(sorted(got)).toEqual(sorted(reference(20_000)));
    expect(readdirSync(join(out, 'pending'))).toEqual([]); // the final checkpoint committed the last transaction
    // filesystem storage: the restore names <dir>/<jobId>/chk-N
    const jobId = /^Job ([0-9a-f]{32}) finished/m.exec(r.stderr)![1]!;
    const restored = /restoring from checkpoint (\d+) \((.*)\)$/m.exec(r.stderr);
    expect(restored?.[2]).toBe(join(checkpoints, jobId, `chk-${restored?.[1]}`));
    expect(existsSync(join(checkpoints, jobId))).toBe(true);
  });

  it('without a failure, on jobmanager storage, also commits each count once', () => {
    const out = tempDir();
    const r = sluiceRun('--no-typecheck', 'examples/checkpointed-count.ts', out, '5000', '-1');
    expectFinished(r);
    expect(r.stderr).not.toMatch(/restarting/);
    expect(sorted(committedLines(out))).toEqual(sorted(reference(5000)));
    expect(readdirSync(join(out, 'pending'))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('examples/nexmark-hot-items.ts', () => {
  TESTED.add('nexmark-hot-items.ts');

  /** Bids per auction in sliding windows (10 s, every 2 s); per window the auction with most bids, lowest id on a tie. */
  function expected(events: number): string[] {
    const config = resolveNexmarkConfig({ firstEventRate: 100_000 });
    const counts = new Map<number, Map<number, number>>(); // window end -> auction -> bids
    for (let i = 0; i < events; i++) {
      const e = nexmarkEventAt(i, config);
      if (e.kind !== 'bid') continue;
      const ts = nexmarkTimestampAt(i, config);
      const lastStart = ts - (ts % 2000);
      for (let start = lastStart; start > ts - 10_000; start -= 2000) {
        let perAuction = counts.get(start + 10_000);
        if (perAuction === undefined) counts.set(start + 10_000, (perAuction = new Map()));
        perAuction.set(e.auction, (perAuction.get(e.auction) ?? 0) + 1);
      }
    }
    const out: string[] = [];
    for (const [end, perAuction] of counts) {
      let best: [number, number] | undefined;
      for (const [auction, bids] of perAuction) {
        if (best === undefined || bids > best[1] || (bids === best[1] && auction < best[0])) best = [auction, bids];
      }
      out.push(`window ending ${new Date(end).toISOString()}: auction ${best![0]} with ${best![1]} bids`);
    }
    return out;
  }

  it('prints the hottest auction of every window (200000 events)', () => {
    const r = sluiceRun('examples/nexmark-hot-items.ts', '200000');
    expectFinished(r);
    const want = expected(200_000);
    expect(want.length).toBeGreaterThan(3);
    expect(sorted(lines(r.stdout))).toEqual(sorted(want));
  });
});

// ---------------------------------------------------------------------------------------------

describe('examples/nexmark-new-sellers.ts', () => {
  TESTED.add('nexmark-new-sellers.ts');

  /** Query 8 by window and seller, and the auctions within 2 s after their seller registered, by plain loops. */
  function expected(events: number): string[] {
    const config = resolveNexmarkConfig({ firstEventRate: 10_000 });
    const persons = new Map<number, { name: string; ts: number }>();
    const auctions: { id: number; seller: number; ts: number }[] = [];
    for (let i = 0; i < events; i++) {
      const e = nexmarkEventAt(i, config);
      expect(e.dateTime).toBe(nexmarkTimestampAt(i, config));
      if (e.kind === 'person') persons.set(e.id, { name: e.name, ts: e.dateTime });
      else if (e.kind === 'auction') auctions.push({ id: e.id, seller: e.seller, ts: e.dateTime });
    }
    const out: string[] = [];
    const window = (ts: number): number => ts - (ts % 10_000);
    const opened = new Map<string, number>(); // seller@window -> auctions
    for (const a of auctions) opened.set(`${a.seller}@${window(a.ts)}`, (opened.get(`${a.seller}@${window(a.ts)}`) ?? 0) + 1);
    for (const [id, p] of persons) {
      const start = window(p.ts);
      const n = opened.get(`${id}@${start}`);
      if (n !== undefined) out.push(`new seller ${id} (${p.name}) in ${hhmmss(start)}-${hhmmss(start + 10_000)}: ${n} auctions`);
    }
    for (const a of auctions) {
      const p = persons.get(a.seller);
      if (p !== undefined && a.ts >= p.ts && a.ts <= p.ts + 2_000) out.push(`auction ${a.id} by ${a.seller} (${p.name}), ${a.ts - p.ts} ms after registering`);
    }
    return out;
  }

  it('prints the new sellers of every window (coGroup) and the auctions opened soon after registering (interval join), at parallelism 2', () => {
    const r = sluiceRun('-p', '2', 'examples/nexmark-new-sellers.ts', '30000');
    expectFinished(r);
    const want = expected(30_000);
    expect(want.filter((l) => l.startsWith('new seller')).length).toBeGreaterThan(10);
    expect(want.filter((l) => l.startsWith('auction')).length).toBeGreaterThan(10);
    expect(sorted(lines(r.stdout))).toEqual(sorted(want));
  });
});

// ---------------------------------------------------------------------------------------------

describe('examples/socket-word-count.ts', () => {
  TESTED.add('socket-word-count.ts');

  it('counts the words typed into a connection per window; the counts of each word add up to its total', async () => {
    const { createServer } = await import('node:net');
    const text = ['to be or not to be', 'that is the question', 'to be', ''];
    // Everything is written at once and the connection closed a second later: every window
    // holding words has fired by then (300 ms windows).
    const server = createServer((socket) => {
      socket.write(text.join('\n'));
      setTimeout(() => socket.end(), 1_000);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const { spawn } = await import('node:child_process');
      const child = spawn(process.execPath, ['bin/sluice.js', 'run', '--no-progress', 'examples/socket-word-count.ts', String(port), '127.0.0.1', '300'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expectFinished({ code, stdout, stderr });
      const got = new Map<string, number>();
      for (const l of lines(stdout)) {
        const [word, count] = l.split(' : ');
        got.set(word!, (got.get(word!) ?? 0) + Number(count));
      }
      const want = new Map<string, number>();
      for (const w of text.join(' ').split(/\s+/)) if (w !== '') want.set(w, (want.get(w) ?? 0) + 1);
      expect(got).toEqual(want);
    } finally {
      server.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('examples/async-lookup.ts', () => {
  TESTED.add('async-lookup.ts');
  let server: PostgresServer;
  const table = uniqueTableName('example_accounts');

  beforeAll(async () => {
    server = await machineServer();
    // Accounts 0..39 of the 50 the payments go to: payments to 40..49 find no owner.
    await sql(server, `CREATE TABLE ${table} (id integer PRIMARY KEY, owner text NOT NULL)`);
    await sql(server, `INSERT INTO ${table} SELECT g, 'owner-' || g FROM generate_series(0, 39) g`);
  });

  afterAll(async () => {
    await sql(server, `DROP TABLE IF EXISTS ${table}`);
    await server.stop();
  });

  it('enriches every payment whose account has an owner, with queries under way side by side (-p 2, checkpoints)', () => {
    const c = server.connection;
    const r = spawnSync(process.execPath, ['bin/sluice.js', 'run', '--no-progress', '-p', '2', '-D', 'execution.checkpointing.interval=50ms', 'examples/async-lookup.ts', table, '3000'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        PGHOST: c.host ?? '127.0.0.1',
        PGPORT: String(c.port ?? 5432),
        PGUSER: c.user ?? 'postgres',
        PGDATABASE: c.database ?? 'postgres',
        ...(c.password === undefined ? {} : { PGPASSWORD: c.password }),
      },
    });
    expectFinished({ code: r.status, stdout: r.stdout, stderr: r.stderr });
    const want: string[] = [];
    for (let i = 0; i < 3000; i++) if (i % 50 < 40) want.push(`payment ${i} account ${i % 50} owner owner-${i % 50}`);
    expect(sorted(lines(r.stdout))).toEqual(sorted(want));
  });
});

// ---------------------------------------------------------------------------------------------

// The Kafka examples need a broker (and kafka-to-postgres a PostgreSQL server with prepared
// transactions): test/kafka-examples.test.ts runs them in the `kafka` project, which starts one.
TESTED.add('kafka-to-kafka.ts');
TESTED.add('kafka-to-postgres.ts');

describe('examples and docs', () => {
  it('every example in examples/ is run by this file', () => {
    const files = readdirSync('examples').filter((f) => f.endsWith('.ts'));
    expect(sorted(files)).toEqual(sorted([...TESTED]));
  });

  it('docs/configuration.md lists every configuration key with its default', () => {
    const doc = readFileSync('docs/configuration.md', 'utf8');
    const duration = (ms: number): string => {
      for (const [unit, f] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1000]] as const) {
        if (ms !== 0 && ms % f === 0) return `${ms / f} ${unit}`;
      }
      return `${ms} ms`;
    };
    const shown = (o: (typeof OPTIONS)[number]): string => {
      if (o.defaultValue === undefined) return '(unset)';
      if (o.spec.type === 'duration') return duration(o.defaultValue as number);
      if (o.spec.type === 'bytes') return `${(o.defaultValue as number) / 1024} kb`;
      return `\`${o.defaultValue}\``;
    };
    const wrong = OPTIONS.filter((o) => {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${o.key}\` |`));
      return row === undefined || row.split(' | ')[2] !== shown(o);
    }).map((o) => `${o.key} (default ${shown(o)})`);
    expect(wrong).toEqual([]);
  });
});
