import { parseTarget, rejectUnknownOptions, requireJobId, rest, type ResponseShape } from './rest-client.js';
import { failureLine, waitingLine, type JobStatusFields } from './job-status-lines.js';

export const INFO_USAGE = 'usage: sluice info [--jobmanager host:port] <jobId>';

interface JobDetails extends JobStatusFields {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  'end-time': number;
  duration: number;
  vertices: {
    name: string;
    parallelism: number;
    status: string;
    /** Subtasks per state (Flink's); absent from a server that predates it. */
    tasks?: Record<string, unknown>;
    metrics: { 'read-records': number; 'write-records': number };
  }[];
}

/** The fields of JobDetails that formatJobInfo reads (Flink's GET /jobs/:jobid has them all). */
const JOB_DETAILS: ResponseShape = {
  jid: 'string',
  name: 'string',
  state: 'string',
  'start-time': 'number',
  'end-time': 'number',
  duration: 'number',
  vertices: [{ name: 'string', parallelism: 'number', status: 'string', metrics: { 'read-records': 'number', 'write-records': 'number' } }],
};

/** `sluice info <jobId>`: a job's details (GET /jobs/:id): name, state, times, vertices with their progress. */
export async function infoCommand(argv: string[]): Promise<number> {
  const target = parseTarget(argv);
  rejectUnknownOptions(argv, INFO_USAGE);
  const id = requireJobId(argv, INFO_USAGE);
  const j = await rest<JobDetails>(target, 'GET', `/jobs/${id}`, undefined, JOB_DETAILS);
  process.stdout.write(formatJobInfo(j));
  return 0;
}

export function formatJobInfo(j: JobDetails, nowMs = Date.now()): string {
  const waiting = waitingLine(j['waiting-for-slots'], nowMs);
  const failure = failureLine(j['last-failure']);
  const lines = [
    `Job ${j.jid}: ${j.name}`,
    `State:        ${j.state}`,
    ...(waiting === undefined ? [] : [`Waiting:      ${waiting.replace(/^waiting /, '')}`]),
    ...(typeof j['num-restarts'] === 'number' ? [`Restarts:     ${j['num-restarts']}`] : []),
    ...(failure === undefined ? [] : [`Last failure: ${failure}`]),
    `Started:      ${new Date(j['start-time']).toISOString()}`,
    ...(j['end-time'] > 0 ? [`Ended:        ${new Date(j['end-time']).toISOString()}`] : []),
    `Duration:     ${formatDuration(j.duration)}`,
    'Vertices:',
  ];
  const rows = [
    ['name', 'parallelism', 'records in', 'records out', 'status'],
    ...j.vertices.map((v) => [v.name, String(v.parallelism), String(v.metrics['read-records']), String(v.metrics['write-records']), vertexStatus(v.status, v.tasks)]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const numeric = [false, true, true, true, false];
  for (const r of rows) lines.push(`  ${r.map((cell, c) => (numeric[c] ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd()}`);
  return lines.join('\n') + '\n';
}

/** The vertex's state, with its subtasks' when they are not all in it: `CREATED (2 SCHEDULED)`. */
function vertexStatus(status: string, tasks: Record<string, unknown> | undefined): string {
  const others = Object.entries(tasks ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0);
  if (others.length === 0 || (others.length === 1 && others[0]![0] === status)) return status;
  return `${status} (${others.map(([s, n]) => `${n} ${s}`).join(', ')})`;
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
