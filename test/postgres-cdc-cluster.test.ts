import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../src/connectors/file/exactly-once-file-sink.js';
import type { CdcRow } from '../src/connectors/postgres-cdc/index.js';
import { seededRandom } from '../src/testing/seeded-random.js';
import { canonical, identity, mirror, runWorkload, workload, WORKLOAD_DDL, type Change } from './support/cdc-workload.js';
import { cancelJob, ClusterProcesses, killTaskManagers, numRestarts, submitJob, waitUntilSettled } from './support/cluster-processes.js';
import { compareMultisets } from './support/txn-store-sink.js';
import { logicalReplicationServer, sql, type PostgresServer } from './services/postgres-cluster.js';

/**
 * The CDC source on a cluster of real processes (a JobManager and two TaskManagers, `sluice
 * cluster run`; the job submitted with `sluice run --jobmanager`): PostgreSQL changes ->
 * exactly-once files while TaskManagers are SIGKILLed at seeded moments
 * (killTaskManagers with the job's progress: kills during checkpoints and right after
 * completed ones). Records cross processes here, so the value types (bigint, Buffer, the
 * unchanged-TOAST marker) go through the record codec. SLUICE_SEED reruns a schedule.
 */

const JOB = join(import.meta.dirname, 'fixtures', 'postgres-cdc', 'cdc-to-files-job.ts');
const KILLS = 3;

const cluster = new ClusterProcesses('sluice-cdc-cluster-');
let server: PostgresServer;
let rest = '';

beforeAll(async () => {
  const t0 = Date.now();
  [server, rest] = await Promise.all([logicalReplicationServer(), cluster.startCluster(2)]);
  console.log(`PostgreSQL: ${server.description}; cluster REST ${rest}; ready in ${Date.now() - t0} ms`);
}, 60_000);

afterAll(async () => {
  await cluster.cleanUp();
  await server?.stop();
});

/** A line of the job's output back as a change (bigint and bytes as the job wrote them). */
function parse(line: string): Change {
  return JSON.parse(line) as Change;
}

describe('postgres cdc source on a cluster of processes', () => {
  it(`PostgreSQL -> exactly-once files with ${KILLS} SIGKILLs of TaskManagers: every change once; the mirrors equal the tables`, { timeout: 90_000 }, async () => {
    const seed = Number(process.env['SLUICE_SEED'] ?? Date.now() % 100_000);
    const txns = workload(seed);
    const expected = txns.flatMap((t) => t.flatMap((s) => s.changes));
    console.log(`cdc cluster seed ${seed} (rerun with SLUICE_SEED=${seed}): ${txns.length} transactions, ${expected.length} changes`);
    for (const ddl of WORKLOAD_DDL) await sql(server, ddl);
    const c = server.connection;
    const connectionString = `postgresql://${c.user}@${c.host}:${c.port}/${c.database}`;
    const out = cluster.tempDir();
    const t0 = Date.now();
    const jobId = await submitJob(rest, JOB, [connectionString, 'cdc_cluster', out], ['-D', `execution.checkpointing.dir=${cluster.tempDir()}`, '-D', 'execution.checkpointing.interval=200ms']);
    let kills = 0;
    let restarts = 0;
    let settled = false;
    try {
      for (let i = 0; i < 600; i++) {
        const r = await sql<{ active: boolean }>(server, "SELECT active FROM pg_replication_slots WHERE slot_name = 'cdc_cluster'");
        if (r[0]?.active === true) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      const writing = runWorkload(server.connection, txns, 15);
      const k = await killTaskManagers(rest, seededRandom(seed), { kills: KILLS, progressOf: jobId });
      kills = k.kills;
      console.log(`cdc cluster seed ${seed}: kills (latest completed checkpoint/phase): ${k.checkpointsAtKills.map((c, i) => `${c}/${k.phases[i]}`).join(' ')}`);
      await writing;
      settled = await waitUntilSettled(rest, jobId, async () => (await readCommittedLines(out)).length >= expected.length, 45_000);
      restarts = await numRestarts(rest, jobId);
    } finally {
      await cancelJob(rest, jobId);
    }
    const changes = (await readCommittedLines(out)).map(parse);
    // Files are committed per checkpoint; within the output, commit order is (commitLsn, seq).
    const lsn = (s: string): bigint => {
      const [hi, lo] = s.split('/');
      return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
    };
    const ordered = [...changes].sort((a, b) => {
      const d = lsn(a.source.commitLsn) - lsn(b.source.commitLsn);
      return d !== 0n ? (d < 0n ? -1 : 1) : a.source.seq - b.source.seq;
    });
    const got = ordered.map(identity);
    console.log(`cdc cluster seed ${seed}: ${kills} kills, ${restarts} restarts, ${changes.length} changes, ${Date.now() - t0} ms`);
    expect(kills).toBe(KILLS);
    expect(restarts).toBeGreaterThanOrEqual(1);
    expect(settled, `${changes.length} of ${expected.length}`).toBe(true);
    expect(compareMultisets(got, expected), `seed ${seed}`).toEqual({ duplicates: 0, missing: 0, unexpected: 0 });
    expect(got, `seed ${seed}`).toEqual(expected);
    const { tables, unchangedToast } = mirror(ordered);
    expect(unchangedToast).toBeGreaterThan(0);
    for (const [name, rows] of tables) {
      const actual = await sql<CdcRow>(server, `SELECT * FROM ${name} ORDER BY id`);
      expect([...rows.values()].sort((a, b) => (a['id'] as number) - (b['id'] as number)).map((r) => canonical(name, r)), name).toEqual(actual.map((r) => canonical(name, r)));
    }
  });
});
