import type { ComponentChildren } from 'preact';
import { clock, time } from '../format';
import type { JobOverview } from '../types';

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge state-${state.toLowerCase()}`}>{state}</span>;
}

export function Card({ label, value, testId }: { label: string; value: ComponentChildren; testId?: string }) {
  return (
    <div class="card" data-testid={testId}>
      <div class="card-value">{value}</div>
      <div class="card-label">{label}</div>
    </div>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="section">
      <header class="section-header">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export function ErrorBox({ error }: { error: Error | undefined }) {
  if (error === undefined) return null;
  return (
    <div class="error" role="alert">
      {error.message}
    </div>
  );
}

export function Loading() {
  return <div class="loading">Loading…</div>;
}

/** What the job waits for and why it last failed (Sluice's fields of the job overview), as notes under its state. */
export function JobStatusNotes({ job, compact }: { job: JobOverview; compact?: boolean }) {
  const w = job['waiting-for-slots'];
  const f = job['last-failure'];
  const cause = f === undefined || f === null ? undefined : compact === true && f.message.length > 120 ? `${f.message.slice(0, 119)}…` : f.message;
  return (
    <>
      {w !== undefined && w !== null && (
        <div class="note note-waiting" data-testid="waiting-for-slots">
          Waiting for {w.required} slot{w.required === 1 ? '' : 's'}, {w.available} available, gives up at {clock(w['timeout-at']).slice(0, 8)} (slot.request.timeout)
        </div>
      )}
      {f !== undefined && f !== null && (
        <div class="note note-failure" data-testid="last-failure" title={f.message}>
          Last failure {time(f.timestamp)}: {cause}
        </div>
      )}
    </>
  );
}

/** A two-column table of labels and values. */
export function KeyValues({ rows, testId }: { rows: [string, ComponentChildren][]; testId?: string }) {
  return (
    <table class="kv" data-testid={testId}>
      <tbody>
        {rows.map(([k, v]) => (
          <tr key={k}>
            <th>{k}</th>
            <td>{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
