import { useState } from 'preact/hooks';
import { api } from '../api';
import { count, duration, percent, rate, time } from '../format';
import { usePoll } from '../hooks';
import { JobActions } from '../components/job-actions';
import { JobGraph, type VertexLive } from '../components/job-graph';
import { ErrorBox, JobStatusNotes, Loading, Section, StateBadge } from '../components/ui';
import type { AggregatedMetric, BackPressure, JobDetails, VertexDetails, WatermarkMetric } from '../types';
import { CheckpointsTab } from './checkpoints';
import { ExceptionsTab } from './exceptions';

const TABS = [
  ['overview', 'Overview'],
  ['checkpoints', 'Checkpoints'],
  ['exceptions', 'Exceptions'],
] as const;

async function loadLive(jobId: string, job: JobDetails): Promise<Map<string, VertexLive>> {
  const live = new Map<string, VertexLive>();
  await Promise.all(
    job.vertices.map(async (v) => {
      const [metrics, bp] = await Promise.all([
        api<AggregatedMetric[]>(`jobs/${jobId}/vertices/${v.id}/subtasks/metrics?get=numRecordsInPerSecond,numRecordsOutPerSecond&agg=sum`),
        api<BackPressure>(`jobs/${jobId}/vertices/${v.id}/backpressure`),
      ]);
      const m = new Map(metrics.map((x) => [x.id, x.sum]));
      const ratio = bp.subtasks.reduce((a, s) => Math.max(a, s.ratio), 0);
      const busy = bp.subtasks.some((s) => s.busyRatio !== undefined) ? bp.subtasks.reduce((a, s) => Math.max(a, s.busyRatio ?? 0), 0) : undefined;
      live.set(v.id, { inRate: m.get('numRecordsInPerSecond'), outRate: m.get('numRecordsOutPerSecond'), level: bp['backpressure-level'], ratio, busy });
    }),
  );
  return live;
}

/** A subtask's input watermark as the REST API gives it (Long.MIN_VALUE: none yet), as Flink's dashboard shows it. */
function watermark(value: string | undefined): string {
  if (value === undefined) return '-';
  return value === '-9223372036854775808' ? 'No Watermark' : time(Number(value));
}

function VertexSubtasks({ jobId, vertexId }: { jobId: string; vertexId: string }) {
  const details = usePoll(() => api<VertexDetails>(`jobs/${jobId}/vertices/${vertexId}`), [jobId, vertexId]);
  const bp = usePoll(() => api<BackPressure>(`jobs/${jobId}/vertices/${vertexId}/backpressure`), [jobId, vertexId]);
  const wm = usePoll(() => api<WatermarkMetric[]>(`jobs/${jobId}/vertices/${vertexId}/watermarks`), [jobId, vertexId]);
  if (details.data === undefined) return <Loading />;
  const ratios = new Map((bp.data?.subtasks ?? []).map((s) => [s.subtask, s]));
  const watermarks = new Map((wm.data ?? []).map((w) => [Number(w.id.split('.')[0]), w.value]));
  return (
    <Section title={`Subtasks of ${details.data.name}`}>
      <table class="table" data-testid="subtask-table">
        <thead>
          <tr>
            <th>Subtask</th>
            <th>Status</th>
            <th>Attempt</th>
            <th>Records in</th>
            <th>Records out</th>
            <th>Back-pressured (total)</th>
            <th>Busy</th>
            <th>Idle</th>
            <th>Backpressure</th>
            <th>Watermark</th>
            <th>TaskManager</th>
          </tr>
        </thead>
        <tbody>
          {details.data.subtasks.map((s) => {
            const b = ratios.get(s.subtask);
            return (
              <tr key={s.subtask}>
                <td>{s.subtask}</td>
                <td>
                  <StateBadge state={s.status} />
                </td>
                <td>{s.attempt}</td>
                <td>{count(s.metrics['read-records'])}</td>
                <td>{count(s.metrics['write-records'])}</td>
                <td>{duration(s.metrics['accumulated-backpressured-time'])}</td>
                <td>{b?.busyRatio === undefined ? '-' : percent(b.busyRatio)}</td>
                <td>{b?.idleRatio === undefined ? '-' : percent(b.idleRatio)}</td>
                <td>{b === undefined ? '-' : <span class={`badge bp-${b['backpressure-level']}`}>{`${b['backpressure-level'].toUpperCase()} ${percent(b.ratio)}`}</span>}</td>
                <td data-testid="subtask-watermark">{watermark(watermarks.get(s.subtask))}</td>
                <td class="mono">{s['taskmanager-id']}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </Section>
  );
}

function OverviewTab({ jobId, job }: { jobId: string; job: JobDetails }) {
  const live = usePoll(() => loadLive(jobId, job), [jobId, job.vertices.length]);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  // Rates and back pressure only of running vertices: the metric fetcher's last samples of an
  // attempt that is gone (a vertex CREATED while the job waits for slots) would show it as working.
  const running = new Set(job.vertices.filter((v) => v.status === 'RUNNING').map((v) => v.id));
  const map = new Map([...(live.data ?? new Map<string, VertexLive>())].filter(([id]) => running.has(id)));
  return (
    <div data-testid="job-overview-tab">
      <JobGraph nodes={job.plan.nodes} vertices={job.vertices} live={map} selected={selected} onSelect={(id) => setSelected(id === selected ? undefined : id)} />
      <ErrorBox error={live.error} />
      <table class="table" data-testid="vertex-table">
        <thead>
          <tr>
            <th>Vertex</th>
            <th>Status</th>
            <th>Parallelism</th>
            <th>Records in</th>
            <th>Records out</th>
            <th>In/s</th>
            <th>Out/s</th>
            <th>Busy (max)</th>
            <th>Backpressure (max)</th>
          </tr>
        </thead>
        <tbody>
          {job.vertices.map((v) => {
            const l = map.get(v.id);
            return (
              <tr key={v.id} class={`clickable${selected === v.id ? ' selected' : ''}`} onClick={() => setSelected(v.id)}>
                <td>{v.name}</td>
                <td>
                  <StateBadge state={v.status} />
                </td>
                <td>{v.parallelism}</td>
                <td>{count(v.metrics['read-records'])}</td>
                <td>{count(v.metrics['write-records'])}</td>
                <td>{rate(l?.inRate)}</td>
                <td>{rate(l?.outRate)}</td>
                <td>{l?.busy === undefined ? '-' : percent(l.busy)}</td>
                <td>{l?.level === undefined ? '-' : <span class={`badge bp-${l.level}`}>{`${l.level.toUpperCase()} ${percent(l.ratio ?? 0)}`}</span>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {selected !== undefined && <VertexSubtasks jobId={jobId} vertexId={selected} />}
    </div>
  );
}

export function JobPage({ jobId, tab }: { jobId: string; tab: string }) {
  const job = usePoll(() => api<JobDetails>(`jobs/${jobId}`), [jobId]);
  const j = job.data;
  return (
    <div data-testid="job-page">
      <ErrorBox error={job.error} />
      {j === undefined ? (
        <Loading />
      ) : (
        <>
          <header class="job-header">
            <div>
              <h1>
                {j.name} <StateBadge state={j.state} />
              </h1>
              <div class="muted mono">{j.jid}</div>
              <div class="muted">
                Started {time(j['start-time'])} · running for {duration(j.duration)}
                {j['end-time'] > 0 ? ` · ended ${time(j['end-time'])}` : ''}
                {j['num-restarts'] === undefined ? '' : ` · `}
                {j['num-restarts'] === undefined ? null : <span data-testid="job-restarts">{j['num-restarts']} restart{j['num-restarts'] === 1 ? '' : 's'}</span>}
              </div>
              <JobStatusNotes job={j} />
            </div>
            <JobActions jobId={jobId} running={j.state === 'RUNNING'} />
          </header>
          <nav class="tabs">
            {TABS.map(([id, label]) => (
              <a key={id} href={`#/job/${jobId}/${id}`} class={tab === id ? 'active' : ''} data-testid={`tab-${id}`}>
                {label}
              </a>
            ))}
          </nav>
          {tab === 'checkpoints' ? <CheckpointsTab jobId={jobId} job={j} /> : tab === 'exceptions' ? <ExceptionsTab jobId={jobId} /> : <OverviewTab jobId={jobId} job={j} />}
        </>
      )}
    </div>
  );
}
