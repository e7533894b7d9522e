import { useEffect, useRef, useState } from 'preact/hooks';
import { lazy } from 'preact-iso';

/** The test call's panel, loaded when it is opened (test-call.tsx). */
const TestCall = lazy(() => import('./test-call'));

/**
 * `Test call` beside `Test chat` on the agent page: opens the voice test call in a modal dialog, whose
 * panel (and, for the twilio transport, Twilio's SDK) is loaded only then.
 */
export function TestCallButton({
  workspaceId,
  agent,
}: {
  workspaceId: string;
  agent: { id: string; language?: string; settings?: { interruptible?: boolean } };
}) {
  const [open, setOpen] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (open && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [open]);
  return (
    <>
      <button type="button" class="primary" onClick={() => setOpen(true)}>
        Test call
      </button>
      {open && (
        <dialog ref={dialog} class="test-call-dialog" aria-label="Test call" onClose={() => setOpen(false)}>
          <TestCall
            workspaceId={workspaceId}
            agentId={agent.id}
            language={agent.language ?? 'en-AU'}
            interruptible={agent.settings?.interruptible !== false}
            onClose={() => dialog.current?.close()}
          />
        </dialog>
      )}
    </>
  );
}
