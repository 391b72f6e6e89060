import { useEffect, useId, useRef, useState } from 'react';
import { type Suggestion, type Triage, TRIAGES } from '../../../api/client';
import { ErrorMessage } from '../../../ui/components';
import { TRIAGE_LABELS, useTriageFailure } from './triage';

/**
 * One click to triage a signature where its failures show (a run's group): a small menu of the triage values, and
 * the confirmation of a suggested one. Picking one PATCHes the signature at once; Escape or a click elsewhere
 * closes the menu.
 */
export function TriageMenu({
  signatureId,
  triage,
  suggested,
  label,
}: {
  signatureId: number;
  triage: Triage;
  suggested: Suggestion | null | undefined;
  /** What is being triaged, for a screen reader: "the 3 failures of this group". */
  label: string;
}) {
  const [open, setOpen] = useState(false);
  const save = useTriageFailure();
  const box = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menuId = useId();
  useEffect(() => {
    if (!open) {
      return;
    }
    const onDown = (e: MouseEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) {
        setOpen(false);
      }
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  const pick = (value: Triage) => {
    setOpen(false);
    save.mutate({ id: signatureId, change: { triage: value } });
    button.current?.focus();
  };
  return (
    <div className="triage-menu" ref={box}>
      <button
        type="button"
        ref={button}
        className="secondary small"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        disabled={save.isPending}
        onClick={() => setOpen(!open)}
      >
        {save.isPending ? 'Saving…' : 'Triage'} <span className="visually-hidden">{label}</span>
        <span aria-hidden="true"> ▾</span>
      </button>
      {open ? (
        <div className="triage-options" id={menuId} role="group" aria-label={`Triage ${label}`}>
          {suggested ? (
            <button type="button" className="confirm" onClick={() => pick(triage)}>
              Confirm suggestion: {TRIAGE_LABELS[triage]}
            </button>
          ) : null}
          {TRIAGES.map((t) => (
            <button type="button" key={t} aria-pressed={t === triage && !suggested} onClick={() => pick(t)}>
              {TRIAGE_LABELS[t]}
            </button>
          ))}
        </div>
      ) : null}
      {save.error ? <ErrorMessage error={save.error} /> : null}
    </div>
  );
}
