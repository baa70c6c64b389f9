import { useEffect, useState } from 'preact/hooks';

export type ToastKind = 'info' | 'success' | 'error';
interface Toast {
  readonly id: number;
  readonly kind: ToastKind;
  readonly text: string;
}

let toasts: Toast[] = [];
let nextId = 1;
const listeners = new Set<(t: Toast[]) => void>();

function publish(): void {
  for (const l of listeners) l(toasts);
}

/** Shows a message at the bottom right; errors stay until closed, others for 8 s. Returns its id. */
export function toast(text: string, kind: ToastKind = 'info'): number {
  const id = nextId++;
  toasts = [...toasts, { id, kind, text }];
  publish();
  if (kind !== 'error') setTimeout(() => dismiss(id), 8000);
  return id;
}

export function dismiss(id: number): void {
  toasts = toasts.filter((t) => t.id !== id);
  publish();
}

export function Toasts() {
  const [list, setList] = useState(toasts);
  useEffect(() => {
    listeners.add(setList);
    return () => void listeners.delete(setList);
  }, []);
  return (
    <div class="toasts" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`} data-testid={`toast-${t.kind}`}>
          <span>{t.text}</span>
          <button type="button" class="link" onClick={() => dismiss(t.id)} aria-label="close">
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
