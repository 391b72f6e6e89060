import { type ReactNode, useEffect, useId, useState } from 'react';
import type { Page as ListPage } from '../api/client';
import { ApiError } from '../api/session';

const PRODUCT = 'Test Management';

/** A page: its <title>, its one <main> landmark and heading. */
export function Page({
  title,
  children,
  actions,
}: {
  title: string;
  children: ReactNode;
  actions?: ReactNode;
}) {
  useEffect(() => {
    document.title = `${title} · ${PRODUCT}`;
  }, [title]);
  return (
    <main className="page" id="main">
      <div className="page-head">
        <h1>{title}</h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </div>
      {children}
    </main>
  );
}

/** The message of an API error (its `message`), or a generic one for a network failure. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) {
    return error.message;
  }
  if (error instanceof TypeError) {
    return 'The service cannot be reached. Check your connection and retry.';
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * An error in words; with `onRetry`, and when asking again may help (not a 404 or 403: the service or the network
 * failed), a button to ask again.
 */
export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) {
    return null;
  }
  const retry = onRetry && !(error instanceof ApiError && (error.status === 404 || error.status === 403));
  return (
    <p className="error" role="alert">
      {messageOf(error)}
      {retry ? (
        <>
          {' '}
          <button type="button" className="link" onClick={onRetry}>
            Try again
          </button>
        </>
      ) : null}
    </p>
  );
}

/** The title of a page whose `what` could not be read: not found only when the API said so. */
export function failedTitle(what: string, error: unknown): string {
  if (error instanceof ApiError && error.status === 404) {
    return `${what} not found`;
  }
  if (error instanceof ApiError && error.status === 403) {
    return `${what}: no access`;
  }
  return `${what} could not be loaded`;
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** A query's three other states (loading, failed, empty) in one place; `children` renders its data. */
export function Loaded<T>({
  query,
  what = 'Loading',
  isEmpty,
  empty,
  children,
}: {
  query: { isPending: boolean; error: unknown; data: T | undefined };
  what?: string;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) {
    return <Loading what={what} />;
  }
  if (query.error || query.data === undefined) {
    return <ErrorMessage error={query.error} />;
  }
  if (isEmpty?.(query.data)) {
    return <Empty>{empty}</Empty>;
  }
  return <>{children(query.data)}</>;
}

/** For pages of the API: empty when it has no items. */
export const noItems = (page: { content: unknown[] }) => page.content.length === 0;

/** A labelled input: the label, the control, and a hint or a field error under it. */
export function Field({
  label,
  hint,
  error,
  ...input
}: { label: string; hint?: ReactNode; error?: string } & React.InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-describedby={hint || error ? hintId : undefined}
        aria-invalid={error ? true : undefined}
        {...input}
      />
      {error ? (
        <span className="field-error" id={hintId}>
          {error}
        </span>
      ) : hint ? (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

/** A count down from `seconds` (a 429's Retry-After), shown until it reaches 0. */
export function Countdown({ seconds, onDone }: { seconds: number; onDone: () => void }) {
  const [left, setLeft] = useState(seconds);
  useEffect(() => {
    const started = Date.now();
    const timer = setInterval(() => {
      const remaining = Math.max(0, seconds - Math.floor((Date.now() - started) / 1000));
      setLeft(remaining);
      if (remaining === 0) {
        clearInterval(timer);
        onDone();
      }
    }, 250);
    return () => clearInterval(timer);
  }, [seconds, onDone]);
  return (
    <p className="error" role="alert">
      Too many attempts. Try again in <strong>{left}</strong> s.
    </p>
  );
}

/** `n` things in words, the noun in the plural unless there is one: "1 result", "1,000 results". */
/**
 * The empty state of a page past a list's last (a stale link, rows removed since): where the list ends, and the way
 * back to its first page, rather than "nothing here". For a list that has rows (`totalElements` > 0).
 */
export function PastLastPage({
  page,
  list,
  noun,
  onFirst,
}: {
  page: number;
  list: Pick<ListPage<unknown>, 'totalElements' | 'totalPages'>;
  noun: string;
  onFirst: () => void;
}) {
  return (
    <>
      Page {page + 1} is past the last page ({counted(list.totalPages, 'page')},{' '}
      {counted(list.totalElements, noun)}).{' '}
      <button type="button" className="link" onClick={onFirst}>
        Go to the first page
      </button>
    </>
  );
}

export function counted(n: number, noun: string): string {
  return `${n.toLocaleString()} ${n === 1 ? noun : `${noun}s`}`;
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** A duration in ms as a person reads it: 850 ms, 12.4 s, 3 min 5 s, 2 h 4 min. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) {
    return '—';
  }
  if (ms < 1000) {
    return `${ms} ms`;
  }
  if (ms < 60_000) {
    return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  }
  const s = Math.round(ms / 1000);
  if (s < 3600) {
    return `${Math.floor(s / 60)} min ${s % 60} s`;
  }
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function formatDuration(from: string, to: string): string {
  return formatMs(Math.max(0, new Date(to).getTime() - new Date(from).getTime()));
}

/** A paged table's navigation. */
export function Pager({
  page,
  totalPages,
  onPage,
}: {
  page: number;
  totalPages: number;
  onPage: (page: number) => void;
}) {
  if (totalPages <= 1) {
    return null;
  }
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1} of {totalPages}
      </span>
      <button type="button" disabled={page + 1 >= totalPages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
