import { useQuery } from '@tanstack/react-query';
import { type RefObject, useEffect, useRef, useState } from 'react';
import { type HistoryItem, historyStatusText, passedOnRetry } from '../../../api/client';
import { messageOf } from '../../../ui/components';
import { useApi } from '../../../session-context';
import { testKeys } from './queries';

/** The runs a row's strip shows. */
export const STRIP_RUNS = 20;

/**
 * Whether the element has come into view (once it has, it stays true): a row's strip is read only when the row is
 * seen, so a page of tests asks for at most its own rows' histories, and fewer on a phone. Without an
 * IntersectionObserver (an old browser, a test's DOM) everything counts as seen.
 */
function useSeen(ref: RefObject<Element | null>): boolean {
  const [seen, setSeen] = useState(() => typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    const element = ref.current;
    if (seen || !element) {
      return;
    }
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          setSeen(true);
          observer.disconnect();
        }
      },
      { rootMargin: '200px' },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref, seen]);
  return seen;
}

/**
 * "13 passed, 2 passed on retry, 4 failed, 1 skipped": the strip in words, for those who do not see its colours (a
 * pass after a failed attempt counted apart, as the strip marks it).
 */
export function stripInWords(items: Pick<HistoryItem, 'status' | 'attempts'>[]): string {
  const count = (is: (i: Pick<HistoryItem, 'status' | 'attempts'>) => boolean) => items.filter(is).length;
  const counts: [string, number][] = [
    ['passed', count((i) => i.status === 'PASSED' && !passedOnRetry(i))],
    ['passed on retry', count(passedOnRetry)],
    ...(['FAILED', 'BROKEN', 'SKIPPED'] as const).map((status): [string, number] => [
      status.toLowerCase(),
      count((i) => i.status === status),
    ]),
  ];
  return counts
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`)
    .join(', ');
}

/**
 * A test's status in its last 20 runs, oldest first, as a strip of small bars (each run's name and status on hover;
 * a pass after a failed attempt red-topped, as on its history page),
 * read from its history once the row is in view.
 */
export function RecentStrip({ projectId, testId }: { projectId: number; testId: number }) {
  const api = useApi();
  const ref = useRef<HTMLSpanElement>(null);
  const seen = useSeen(ref);
  const recent = useQuery({
    queryKey: testKeys.recent(projectId, testId),
    queryFn: () => api.testHistory(projectId, testId, 0, STRIP_RUNS),
    enabled: seen,
    staleTime: 60_000,
  });
  if (recent.error) {
    return (
      <span ref={ref} className="mini-strip-none hint" title={messageOf(recent.error)}>
        not available
      </span>
    );
  }
  if (!recent.data) {
    return (
      <span ref={ref} className="mini-strip mini-strip-pending" aria-hidden="true">
        <span className="skeleton" />
      </span>
    );
  }
  const items = recent.data.content.slice().reverse();
  if (!items.length) {
    return (
      <span ref={ref} className="hint">
        no runs yet
      </span>
    );
  }
  const last = items[items.length - 1];
  return (
    <span
      ref={ref}
      className="mini-strip"
      role="img"
      aria-label={`Last ${items.length} ${items.length === 1 ? 'run' : 'runs'}: ${stripInWords(items)}; latest ${historyStatusText(last)}`}
    >
      {items.map((i) => (
        <span
          key={i.id}
          className={`mini-strip-${i.status.toLowerCase()}${passedOnRetry(i) ? ' mini-strip-retried' : ''}`}
          title={`${i.runName}: ${historyStatusText(i)}`}
        />
      ))}
    </span>
  );
}
