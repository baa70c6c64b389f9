import { useState } from 'preact/hooks';
import { api, awaitOperation, refreshAll } from '../api';
import { ConfirmDialog } from './dialog';
import { dismiss, toast } from './toasts';

type Action = 'savepoint' | 'stop' | 'cancel';

/** Trigger a savepoint, stop with a savepoint, cancel: each asks for confirmation first. */
export function JobActions({ jobId, running }: { jobId: string; running: boolean }) {
  const [open, setOpen] = useState<Action | undefined>(undefined);
  const [dir, setDir] = useState('');
  const [drain, setDrain] = useState(false);

  const runSavepoint = async (kind: 'savepoint' | 'stop'): Promise<void> => {
    const what = kind === 'savepoint' ? 'Savepoint' : 'Stop with savepoint';
    const pending = toast(`${what} of job ${jobId.slice(0, 8)} in progress…`);
    try {
      const body: Record<string, unknown> =
        kind === 'savepoint' ? { 'cancel-job': false, ...(dir.trim() === '' ? {} : { 'target-directory': dir.trim() }) } : { drain, ...(dir.trim() === '' ? {} : { targetDirectory: dir.trim() }) };
      const { 'request-id': triggerId } = await api<{ 'request-id': string }>(`jobs/${jobId}/${kind === 'savepoint' ? 'savepoints' : 'stop'}`, { method: 'POST', body });
      const op = await awaitOperation(`jobs/${jobId}/savepoints/${triggerId}`);
      dismiss(pending);
      const failure = op?.['failure-cause'];
      if (failure !== undefined) toast(`${what} failed: ${failure['stack-trace']}`, 'error');
      else toast(`${what} completed: ${op?.location ?? ''}`, 'success');
    } catch (e) {
      dismiss(pending);
      toast(`${what} failed: ${(e as Error).message}`, 'error');
    }
    refreshAll();
  };

  const runCancel = async (): Promise<void> => {
    try {
      await api(`jobs/${jobId}?mode=cancel`, { method: 'PATCH' });
      toast(`Job ${jobId.slice(0, 8)} is being canceled`, 'success');
    } catch (e) {
      toast(`Cancel failed: ${(e as Error).message}`, 'error');
    }
    refreshAll();
  };

  const close = (): void => setOpen(undefined);
  const dirInput = (
    <label class="field">
      Target directory <span class="muted">(empty: execution.checkpointing.savepoint-dir)</span>
      <input type="text" value={dir} data-testid="savepoint-dir" placeholder="/path/to/savepoints" onInput={(e) => setDir((e.target as HTMLInputElement).value)} />
    </label>
  );
  return (
    <div class="actions">
      <button type="button" data-testid="trigger-savepoint" disabled={!running} onClick={() => setOpen('savepoint')}>
        Trigger savepoint
      </button>
      <button type="button" data-testid="stop-job" disabled={!running} onClick={() => setOpen('stop')}>
        Stop with savepoint
      </button>
      <button type="button" class="danger" data-testid="cancel-job" disabled={!running} onClick={() => setOpen('cancel')}>
        Cancel job
      </button>
      {open === 'savepoint' && (
        <ConfirmDialog
          title="Trigger a savepoint?"
          confirmLabel="Trigger savepoint"
          onClose={close}
          onConfirm={() => {
            close();
            void runSavepoint('savepoint');
          }}
        >
          <p>The job keeps running; the savepoint is a self-contained copy of its state that `sluice run -s` can start from.</p>
          {dirInput}
        </ConfirmDialog>
      )}
      {open === 'stop' && (
        <ConfirmDialog
          title="Stop the job with a savepoint?"
          confirmLabel="Stop job"
          danger
          onClose={close}
          onConfirm={() => {
            close();
            void runSavepoint('stop');
          }}
        >
          <p>Sources stop, a final savepoint is taken and committed, then the job finishes.</p>
          {dirInput}
          <label class="checkbox">
            <input type="checkbox" checked={drain} data-testid="stop-drain" onChange={(e) => setDrain((e.target as HTMLInputElement).checked)} />
            Drain: close event time (fire all windows) before the savepoint
          </label>
        </ConfirmDialog>
      )}
      {open === 'cancel' && (
        <ConfirmDialog
          title="Cancel the job?"
          confirmLabel="Cancel job"
          danger
          onClose={close}
          onConfirm={() => {
            close();
            void runCancel();
          }}
        >
          <p>The job stops at once, without a savepoint. Retained checkpoints are kept only with RETAIN_ON_CANCELLATION.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
