import type { ComponentChildren } from 'preact';

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
