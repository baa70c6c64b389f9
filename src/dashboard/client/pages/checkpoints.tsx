import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { bytes, clock, count, duration, time } from '../format';
import { usePoll } from '../hooks';
import { BarChart, LineChart, type ChartPoint } from '../components/charts';
import { Card, ErrorBox, KeyValues, Loading, Section, StateBadge } from '../components/ui';
import type { CheckpointConfig, CheckpointDetails, CheckpointEntry, CheckpointStats, CheckpointSubtasks, JobDetails, Stat } from '../types';

function SummaryTable({ stats }: { stats: CheckpointStats }) {
  const rows: [string, Stat, (n: number) => string][] = [
    ['End-to-end duration', stats.summary.end_to_end_duration, duration],
    ['Checkpointed data size', stats.summary.checkpointed_size, bytes],
    ['Full checkpoint data size', stats.summary.state_size, bytes],
    ['Processed in-flight data', stats.summary.processed_data, bytes],
    ['Persisted in-flight records', stats.summary.persisted_data, count],
    ['Buffered during alignment', stats.summary.alignment_buffered, bytes],
  ];
  const cols = ['min', 'avg', 'p50', 'p90', 'p95', 'p99', 'p999', 'max'] as const;
  return (
    <table class="table" data-testid="checkpoint-summary">
      <thead>
        <tr>
          <th></th>
          {cols.map((c) => (
            <th key={c}>{c === 'p999' ? 'p99.9' : c}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map(([label, s, f]) => (
          <tr key={label}>
            <th>{label}</th>
            {cols.map((c) => (
              <td key={c}>{f(s[c])}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Latest({ stats }: { stats: CheckpointStats }) {
  const l = stats.latest;
  const entry = (e: CheckpointEntry | null): string => (e === null ? 'none' : `#${e.id} at ${time(e.trigger_timestamp)} (${duration(e.end_to_end_duration)}, ${bytes(e.state_size)})`);
  return (
    <KeyValues
      testId="checkpoint-latest"
      rows={[
        ['Latest completed checkpoint', entry(l.completed)],
        ['Latest savepoint', l.savepoint === null ? 'none' : `${entry(l.savepoint)} → ${l.savepoint.external_path ?? ''}`],
        ['Latest failed checkpoint', l.failed === null ? 'none' : `${entry(l.failed)}: ${l.failed.failure_message ?? ''}`],
        ['Latest restore', l.restored === null ? 'none' : `#${l.restored.id} (${l.restored.is_savepoint ? 'savepoint' : 'checkpoint'}) at ${time(l.restored.restore_timestamp)} from ${l.restored.external_path}`],
      ]}
    />
  );
}

function SubtaskTable({ jobId, checkpointId, vertexId }: { jobId: string; checkpointId: number; vertexId: string }) {
  const d = usePoll(() => api<CheckpointSubtasks>(`jobs/${jobId}/checkpoints/details/${checkpointId}/subtasks/${vertexId}`), [jobId, checkpointId, vertexId], 3000);
  if (d.error !== undefined) return <ErrorBox error={d.error} />;
  if (d.data === undefined) return <Loading />;
  const s = d.data.summary;
  return (
    <div class="subtasks">
      <table class="table compact" data-testid="checkpoint-subtasks">
        <thead>
          <tr>
            <th>Subtask</th>
            <th>Status</th>
            <th>Acknowledged</th>
            <th>End to end</th>
            <th>State size</th>
            <th>Sync</th>
            <th>Async</th>
            <th>Alignment</th>
            <th>In-flight records persisted</th>
            <th>Start delay</th>
            <th>Unaligned</th>
          </tr>
        </thead>
        <tbody>
          {d.data.subtasks.map((t) => (
            <tr key={t.index}>
              <td>{t.index}</td>
              <td>{t.status}</td>
              <td title={time(t.ack_timestamp)}>{clock(t.ack_timestamp)}</td>
              <td>{duration(t.end_to_end_duration)}</td>
              <td>{bytes(t.state_size)}</td>
              <td>{duration(t.checkpoint?.sync)}</td>
              <td>{duration(t.checkpoint?.async)}</td>
              <td>{duration(t.alignment?.duration)}</td>
              <td>{t.alignment === undefined ? '-' : count(t.alignment.persisted)}</td>
              <td>{duration(t.start_delay)}</td>
              <td>{t.unaligned_checkpoint === undefined ? '-' : t.unaligned_checkpoint ? 'yes' : 'no'}</td>
            </tr>
          ))}
          <tr class="summary-row">
            <td colSpan={3}>max</td>
            <td>{duration(s.end_to_end_duration.max)}</td>
            <td>{bytes(s.state_size.max)}</td>
            <td>{duration(s.checkpoint_duration.sync.max)}</td>
            <td>{duration(s.checkpoint_duration.async.max)}</td>
            <td>{duration(s.alignment.duration.max)}</td>
            <td>{count(s.alignment.persisted.max)}</td>
            <td>{duration(s.start_delay.max)}</td>
            <td></td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}

function CheckpointDetail({ jobId, checkpointId, job }: { jobId: string; checkpointId: number; job: JobDetails }) {
  const d = usePoll(() => api<CheckpointDetails>(`jobs/${jobId}/checkpoints/details/${checkpointId}`), [jobId, checkpointId], 3000);
  const [vertex, setVertex] = useState<string | undefined>(undefined);
  if (d.error !== undefined) return <ErrorBox error={d.error} />;
  if (d.data === undefined) return <Loading />;
  return (
    <div class="checkpoint-detail" data-testid="checkpoint-detail">
      <table class="table compact">
        <thead>
          <tr>
            <th>Vertex</th>
            <th>Acknowledged</th>
            <th>Latest ack</th>
            <th>End to end</th>
            <th>State size</th>
            <th>In-flight records persisted</th>
          </tr>
        </thead>
        <tbody>
          {job.vertices.map((v) => {
            const t = d.data!.tasks[v.id];
            if (t === undefined) return null;
            return (
              <tr key={v.id} class={`clickable${vertex === v.id ? ' selected' : ''}`} data-testid="checkpoint-vertex" onClick={() => setVertex(vertex === v.id ? undefined : v.id)}>
                <td>{v.name}</td>
                <td>
                  {t.num_acknowledged_subtasks}/{t.num_subtasks}
                </td>
                <td title={time(t.latest_ack_timestamp)}>{clock(t.latest_ack_timestamp)}</td>
                <td>{duration(t.end_to_end_duration)}</td>
                <td>{bytes(t.state_size)}</td>
                <td>{count(t.persisted_data)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {vertex !== undefined && <SubtaskTable jobId={jobId} checkpointId={checkpointId} vertexId={vertex} />}
    </div>
  );
}

function History({ jobId, stats, job }: { jobId: string; stats: CheckpointStats; job: JobDetails }) {
  const [open, setOpen] = useState<number | undefined>(undefined);
  return (
    <table class="table compact" data-testid="checkpoint-history">
      <thead>
        <tr>
          <th>ID</th>
          <th>Status</th>
          <th>Type</th>
          <th>Trigger time</th>
          <th>Latest ack</th>
          <th>End to end</th>
          <th title="checkpointed_size">Checkpointed</th>
          <th title="state_size">Full size</th>
          <th title="alignment_buffered">Buffered</th>
          <th title="processed_data">Processed</th>
          <th title="persisted_data: in-flight records stored by an unaligned checkpoint">Persisted</th>
          <th title="acknowledged / all subtasks">Acks</th>
          <th>Path / failure</th>
        </tr>
      </thead>
      <tbody>
        {stats.history.map((e) => (
          <Fragment key={e.id}>
          <tr data-checkpoint-id={e.id} data-checkpoint-type={e.checkpoint_type} class={`clickable${e.is_savepoint ? ' savepoint' : ''}`} onClick={() => setOpen(open === e.id ? undefined : e.id)}>
            <td>{e.id}</td>
            <td>
              <StateBadge state={e.status} />
            </td>
            <td>{e.checkpoint_type}</td>
            <td title={time(e.trigger_timestamp)}>{clock(e.trigger_timestamp)}</td>
            <td title={time(e.latest_ack_timestamp)}>{clock(e.latest_ack_timestamp)}</td>
            <td>{duration(e.end_to_end_duration)}</td>
            <td>{bytes(e.checkpointed_size)}</td>
            <td>{bytes(e.state_size)}</td>
            <td>{bytes(e.alignment_buffered)}</td>
            <td>{bytes(e.processed_data)}</td>
            <td>{count(e.persisted_data)}</td>
            <td>
              {e.num_acknowledged_subtasks}/{e.num_subtasks}
            </td>
            <td class="path" title={e.external_path ?? e.failure_message ?? ''}>
              {e.status === 'FAILED' ? e.failure_message : (e.external_path ?? '')}
            </td>
          </tr>
          {open === e.id && (
            <tr class="detail-row">
              <td colSpan={13}>
                <CheckpointDetail jobId={jobId} checkpointId={e.id} job={job} />
              </td>
            </tr>
          )}
          </Fragment>
        ))}
      </tbody>
    </table>
  );
}

function Config({ jobId }: { jobId: string }) {
  const c = usePoll(
    () =>
      api<CheckpointConfig>(`jobs/${jobId}/checkpoints/config`).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) return undefined;
        throw e;
      }),
    [jobId],
    30_000,
  );
  if (c.error !== undefined) return <ErrorBox error={c.error} />;
  const x = c.data;
  if (x === undefined) return <p class="muted">Checkpointing is not enabled for this job (set execution.checkpointing.interval).</p>;
  return (
    <KeyValues
      testId="checkpoint-config"
      rows={[
        ['Checkpointing mode', x.mode === 'exactly_once' ? 'Exactly once' : 'At least once'],
        ['Interval', duration(x.interval)],
        ['Timeout', duration(x.timeout)],
        ['Minimum pause between checkpoints', duration(x.min_pause)],
        ['Maximum concurrent checkpoints', x.max_concurrent],
        ['Unaligned checkpoints', x.unaligned_checkpoints ? 'enabled' : 'disabled'],
        ['Aligned checkpoint timeout', duration(x.aligned_checkpoint_timeout)],
        ['Tolerable failed checkpoints', x.tolerable_failed_checkpoints],
        ['Persist checkpoints externally', x.externalization.enabled ? (x.externalization.delete_on_cancellation ? 'enabled, deleted on cancellation' : 'enabled, retained on cancellation') : 'disabled'],
        ['State backend', x.state_backend],
        ['Checkpoint storage', x.checkpoint_storage],
        ['Checkpoints after tasks finish', x.checkpoints_after_tasks_finish ? 'enabled' : 'disabled'],
        ['Changelog state backend', x.state_changelog_enabled ? 'enabled' : 'disabled'],
      ]}
    />
  );
}

export function CheckpointsTab({ jobId, job }: { jobId: string; job: JobDetails }) {
  const stats = usePoll(() => api<CheckpointStats>(`jobs/${jobId}/checkpoints`), [jobId]);
  const s = stats.data;
  const completed = (s?.history ?? []).filter((e) => e.status === 'COMPLETED').sort((a, b) => a.id - b.id);
  const label = (e: CheckpointEntry, v: string): string => `#${e.id} ${e.checkpoint_type}: ${v}`;
  const durations: ChartPoint[] = completed.map((e) => ({ x: e.id, y: e.end_to_end_duration, highlight: e.is_savepoint, label: label(e, duration(e.end_to_end_duration)) }));
  const sizes: ChartPoint[] = completed.map((e) => ({ x: e.id, y: e.state_size, highlight: e.is_savepoint, label: label(e, bytes(e.state_size)) }));
  return (
    <div data-testid="checkpoints-tab">
      <ErrorBox error={stats.error} />
      {s === undefined ? (
        <Loading />
      ) : (
        <>
          <div class="cards">
            <Card label="Triggered" value={s.counts.total} testId="count-total" />
            <Card label="In progress" value={s.counts.in_progress} />
            <Card label="Completed" value={s.counts.completed} testId="count-completed" />
            <Card label="Failed" value={s.counts.failed} testId="count-failed" />
            <Card label="Restored" value={s.counts.restored} />
          </div>
          <Section title="Latest">
            <Latest stats={s} />
          </Section>
          <div class="charts">
            <LineChart title="End-to-end duration" points={durations} format={duration} testId="chart-duration" />
            <BarChart title="Checkpointed size" points={sizes} format={bytes} testId="chart-size" />
          </div>
          <Section title="Summary (completed checkpoints)">
            <SummaryTable stats={s} />
          </Section>
          <Section title={`History (${s.history.length}, newest first; click a row for subtask detail)`}>
            {s.history.length === 0 ? <p class="muted">No checkpoint yet.</p> : <History jobId={jobId} stats={s} job={job} />}
          </Section>
        </>
      )}
      <Section title="Configuration">
        <Config jobId={jobId} />
      </Section>
    </div>
  );
}
