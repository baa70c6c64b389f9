import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** A modal confirmation (native <dialog>): the action runs only on "confirm". */
export function ConfirmDialog(props: { title: string; confirmLabel: string; danger?: boolean; onConfirm: () => void; onClose: () => void; children?: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d !== null && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} class="dialog" data-testid="confirm-dialog" onClose={props.onClose}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          props.onConfirm();
        }}
      >
        <h3>{props.title}</h3>
        <div class="dialog-body">{props.children}</div>
        <div class="dialog-buttons">
          <button type="button" data-testid="dialog-cancel" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button type="submit" class={props.danger === true ? 'danger' : 'primary'} data-testid="dialog-confirm">
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
