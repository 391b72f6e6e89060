import { type FormEvent, useId, useRef, useState } from 'react';
import type { QuarantineRequest } from '../../../api/client';
import { ErrorMessage } from '../../../ui/components';
import { useEscape } from '../../../ui/use-escape';

/** The longest reason the API takes (a sentence or two, not a report). */
export const MAX_REASON = 1000;

/** A day picked in a date input (`YYYY-MM-DD`) as the end of that day in the browser's time zone, as the API's ISO. */
export function endOfDay(day: string): string {
  return new Date(`${day}T23:59:59.999`).toISOString();
}

/** Today in the browser's time zone as a date input reads it. */
function today(): string {
  const now = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/**
 * Quarantine one test: why (required: everyone who sees the test reads it) and, optionally, the last day of the
 * quarantine, after which it ends by itself. The API's refusal shows under the form, the reason kept for a retry.
 */
export function QuarantineForm({
  testName,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  testName: string;
  pending: boolean;
  error: unknown;
  onSubmit: (request: QuarantineRequest) => void;
  onCancel: () => void;
}) {
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [tried, setTried] = useState(false);
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  useEscape(form, pending ? undefined : onCancel);
  const min = today();
  const reasonProblem = !reason.trim()
    ? 'Say why: the reason shows to everyone who sees the test.'
    : reason.length > MAX_REASON
      ? `At most ${MAX_REASON} characters.`
      : undefined;
  const untilProblem = until && until < min ? 'The last day cannot be in the past.' : undefined;
  return (
    <form
      ref={form}
      className="quarantine-form"
      aria-label={`Quarantine ${testName}`}
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        setTried(true);
        if (reasonProblem || untilProblem) {
          return;
        }
        onSubmit({ reason: reason.trim(), ...(until ? { until: endOfDay(until) } : {}) });
      }}
    >
      <div className="row">
        <div className="field quarantine-reason">
          <label htmlFor={`${id}-reason`}>Reason</label>
          <input
            id={`${id}-reason`}
            type="text"
            value={reason}
            maxLength={MAX_REASON + 1}
            placeholder="e.g. times out on the shared staging database, see BUG-123"
            aria-invalid={tried && reasonProblem ? true : undefined}
            aria-describedby={`${id}-reason-hint`}
            onChange={(e) => setReason(e.target.value)}
            // The form opens for this: the reason is what to type first.
            autoFocus
          />
          <span className={tried && reasonProblem ? 'field-error' : 'hint'} id={`${id}-reason-hint`}>
            {tried && reasonProblem ? reasonProblem : 'Shown beside the test wherever it is marked.'}
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-until`}>Until (optional)</label>
          <input
            id={`${id}-until`}
            type="date"
            value={until}
            min={min}
            aria-invalid={tried && untilProblem ? true : undefined}
            aria-describedby={`${id}-until-hint`}
            onChange={(e) => setUntil(e.target.value)}
          />
          <span className={tried && untilProblem ? 'field-error' : 'hint'} id={`${id}-until-hint`}>
            {tried && untilProblem ? untilProblem : 'It ends by itself after this day.'}
          </span>
        </div>
      </div>
      <ErrorMessage error={error} />
      <div className="form-buttons">
        <button type="submit" disabled={pending}>
          {pending ? 'Quarantining…' : 'Quarantine'}
        </button>
        <button type="button" className="secondary" onClick={onCancel} disabled={pending}>
          Cancel
        </button>
      </div>
    </form>
  );
}
