import { api } from '../api';
import { time } from '../format';
import { usePoll } from '../hooks';
import { Card, ErrorBox, Loading, Section } from '../components/ui';
import type { Exceptions, MetricValue } from '../types';

export function ExceptionsTab({ jobId }: { jobId: string }) {
  const ex = usePoll(() => api<Exceptions>(`jobs/${jobId}/exceptions`), [jobId], 3000);
  const restarts = usePoll(() => api<MetricValue[]>(`jobs/${jobId}/metrics?get=numRestarts,uptime`), [jobId], 3000);
  const m = new Map((restarts.data ?? []).map((x) => [x.id, x.value]));
  return (
    <div data-testid="exceptions-tab">
      <ErrorBox error={ex.error ?? restarts.error} />
      <div class="cards">
        <Card label="Restarts" value={m.get('numRestarts') ?? '-'} testId="num-restarts" />
        <Card label="Failures recorded" value={ex.data?.exceptionHistory.entries.length ?? '-'} />
      </div>
      {ex.data === undefined ? (
        <Loading />
      ) : ex.data.exceptionHistory.entries.length === 0 ? (
        <p class="muted">No failures: the job has not restarted.</p>
      ) : (
        <>
          <Section title={`Root exception (${time(ex.data.timestamp)})`}>
            <pre class="stack">{ex.data['root-exception']}</pre>
          </Section>
          <Section title="Exception history (newest first)">
            {ex.data.exceptionHistory.entries.map((e, i) => (
              <details key={i} class="exception" open={i === 0}>
                <summary>
                  {time(e.timestamp)} · {e.exceptionName}
                  {e.taskName === null ? '' : ` in ${e.taskName}`}: {e.stacktrace.split('\n')[0]}
                </summary>
                <pre class="stack">{e.stacktrace}</pre>
              </details>
            ))}
          </Section>
        </>
      )}
    </div>
  );
}
