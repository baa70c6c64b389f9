import { api } from '../api';
import { bytes, time } from '../format';
import { usePoll } from '../hooks';
import { ErrorBox, KeyValues, Loading, Section } from '../components/ui';
import type { TaskManager } from '../types';

export function TaskManagersPage({ selected }: { selected: string | undefined }) {
  const list = usePoll(() => api<{ taskmanagers: TaskManager[] }>('taskmanagers'), [], 5000);
  const detail = usePoll(() => (selected === undefined ? Promise.resolve(undefined) : api<TaskManager>(`taskmanagers/${encodeURIComponent(selected)}`)), [selected], 5000);
  return (
    <div data-testid="taskmanagers-page">
      <h1>TaskManagers</h1>
      <ErrorBox error={list.error} />
      {list.data === undefined ? (
        <Loading />
      ) : list.data.taskmanagers.length === 0 ? (
        <p class="muted">No TaskManager registered.</p>
      ) : (
        <table class="table" data-testid="taskmanager-table">
          <thead>
            <tr>
              <th>Id</th>
              <th>Path</th>
              <th>Slots</th>
              <th>Free slots</th>
              <th>CPU cores</th>
              <th>Physical memory</th>
              <th>Free memory</th>
              <th>Last heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {list.data.taskmanagers.map((t) => (
              <tr key={t.id} class="clickable" onClick={() => (location.hash = `#/taskmanagers/${encodeURIComponent(t.id)}`)}>
                <td class="mono">{t.id}</td>
                <td class="mono">{t.path}</td>
                <td>{t.slotsNumber}</td>
                <td>{t.freeSlots}</td>
                <td>{t.hardware.cpuCores}</td>
                <td>{bytes(t.hardware.physicalMemory)}</td>
                <td>{bytes(t.hardware.freeMemory)}</td>
                <td>{time(t.timeSinceLastHeartbeat)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {selected !== undefined && detail.data !== undefined && (
        <Section title={`TaskManager ${detail.data.id}`}>
          <KeyValues rows={Object.entries(detail.data.metrics ?? {}).map(([k, v]) => [k, bytes(v)])} />
        </Section>
      )}
    </div>
  );
}
