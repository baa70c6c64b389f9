import { api } from '../api';
import { count, duration, time } from '../format';
import { usePoll } from '../hooks';
import { Card, ErrorBox, JobStatusNotes, Loading, Section, StateBadge } from '../components/ui';
import type { ClusterOverview, JobOverview } from '../types';

export function JobTable({ jobs }: { jobs: readonly JobOverview[] }) {
  if (jobs.length === 0) return <p class="muted">No jobs.</p>;
  return (
    <table class="table" data-testid="job-table">
      <thead>
        <tr>
          <th>Name</th>
          <th>Job id</th>
          <th>State</th>
          <th>Restarts</th>
          <th>Start time</th>
          <th>Duration</th>
          <th>Tasks</th>
        </tr>
      </thead>
      <tbody>
        {jobs.map((j) => (
          <tr key={j.jid} class="clickable" onClick={() => (location.hash = `#/job/${j.jid}/overview`)}>
            <td>
              <a href={`#/job/${j.jid}/overview`}>{j.name}</a>
            </td>
            <td class="mono">{j.jid}</td>
            <td>
              <StateBadge state={j.state} />
              <JobStatusNotes job={j} compact />
            </td>
            <td data-testid="job-restarts">{j['num-restarts'] ?? '-'}</td>
            <td>{time(j['start-time'])}</td>
            <td>{duration(j.duration)}</td>
            <td>
              {j.tasks.running} running / {j.tasks.total}
              {(j.tasks.scheduled ?? 0) > 0 ? `, ${j.tasks.scheduled} scheduled` : ''}
              {j.tasks.finished > 0 ? `, ${j.tasks.finished} finished` : ''}
              {j.tasks.failed > 0 ? `, ${j.tasks.failed} failed` : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function OverviewPage() {
  const overview = usePoll(() => api<ClusterOverview>('overview'), []);
  const jobs = usePoll(() => api<{ jobs: JobOverview[] }>('jobs/overview'), []);
  const o = overview.data;
  const running = jobs.data?.jobs.filter((j) => ['RUNNING', 'RESTARTING', 'INITIALIZING'].includes(j.state)) ?? [];
  const done = jobs.data?.jobs.filter((j) => !running.includes(j)) ?? [];
  return (
    <div data-testid="overview-page">
      <h1>Overview</h1>
      <ErrorBox error={overview.error ?? jobs.error} />
      {o === undefined ? (
        <Loading />
      ) : (
        <div class="cards">
          <Card label="TaskManagers" value={o.taskmanagers} testId="card-taskmanagers" />
          <Card label="Slots available / total" value={`${o['slots-available']} / ${o['slots-total']}`} />
          <Card label="Running jobs" value={count(o['jobs-running'])} testId="card-running" />
          <Card label="Finished" value={o['jobs-finished']} />
          <Card label="Canceled" value={o['jobs-cancelled']} />
          <Card label="Failed" value={o['jobs-failed']} />
        </div>
      )}
      <Section title="Running jobs">{jobs.data === undefined ? <Loading /> : <JobTable jobs={running} />}</Section>
      <Section title="Completed jobs">{jobs.data === undefined ? <Loading /> : <JobTable jobs={done} />}</Section>
    </div>
  );
}

export function JobsPage() {
  const jobs = usePoll(() => api<{ jobs: JobOverview[] }>('jobs/overview'), []);
  return (
    <div data-testid="jobs-page">
      <h1>Jobs</h1>
      <ErrorBox error={jobs.error} />
      {jobs.data === undefined ? <Loading /> : <JobTable jobs={jobs.data.jobs} />}
    </div>
  );
}
