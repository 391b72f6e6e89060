import { useEffect, useState } from 'react';

/**
 * Puts `text` on the clipboard: through the Clipboard API where the page may use it (a secure context, permission
 * granted), else through a selected, off-screen text area and the older copy command, which browsers still honour
 * on a click. Rejects when neither is allowed.
 */
export async function copyText(text: string): Promise<void> {
  if (window.isSecureContext && navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // Refused (no permission, or the document lost focus): the older way may still work.
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'copy-buffer';
  // Selecting moves the focus; it goes back to where it was (the button) afterwards.
  const focused = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  document.body.append(area);
  try {
    area.focus();
    area.select();
    // The older way, where the Clipboard API is not allowed (deprecated, still honoured on a click).
    if (!document.execCommand('copy')) {
      throw new Error('The browser refused to copy');
    }
  } finally {
    area.remove();
    focused?.focus();
  }
}

/** A button that copies `text`, and says (to a screen reader too) whether it did. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [outcome, setOutcome] = useState<'copied' | 'failed' | undefined>();
  useEffect(() => {
    if (!outcome) {
      return;
    }
    const timer = setTimeout(() => setOutcome(undefined), 4000);
    return () => clearTimeout(timer);
  }, [outcome]);
  return (
    <span className="copy">
      <button
        type="button"
        className="secondary"
        onClick={() => {
          copyText(text).then(
            () => setOutcome('copied'),
            () => setOutcome('failed'),
          );
        }}
      >
        Copy <span className="visually-hidden">the {what}</span>
      </button>
      <span role="status" className={outcome === 'failed' ? 'hint field-error' : 'hint'}>
        {outcome === 'copied'
          ? `Copied the ${what}.`
          : outcome === 'failed'
            ? 'The browser did not allow copying: select the text instead.'
            : ''}
      </span>
    </span>
  );
}
