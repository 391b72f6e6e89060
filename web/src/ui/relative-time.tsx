import { useEffect, useState } from 'react';
import { formatDate } from './components';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * How long ago `iso` was, as one scans a list: "just now", "5 min ago", "3 h ago", "yesterday", "4 d ago", and past
 * a month the date itself. A time ahead of `now` (a clock a little ahead of the browser's) is "just now".
 */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const at = new Date(iso).getTime();
  if (Number.isNaN(at)) {
    return '—';
  }
  const ago = now - at;
  if (ago < MINUTE) {
    return 'just now';
  }
  if (ago < HOUR) {
    return `${Math.floor(ago / MINUTE)} min ago`;
  }
  if (ago < DAY) {
    return `${Math.floor(ago / HOUR)} h ago`;
  }
  if (ago < 2 * DAY) {
    return 'yesterday';
  }
  if (ago < 31 * DAY) {
    return `${Math.floor(ago / DAY)} d ago`;
  }
  return new Date(at).toLocaleDateString();
}

/** The current time, again each minute: what "5 min ago" is measured from while a page stays open. */
function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), MINUTE);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** A time as "3 h ago", the exact time on hover (its title) and for machines (its dateTime). */
export function RelativeTime({ iso }: { iso: string }) {
  const now = useNow();
  return (
    <time dateTime={iso} title={formatDate(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}

/**
 * When a run ended, or began while it is in progress: "finished 3 h ago" from its finish (a run that ran for two hours
 * finished two hours after it started), "in progress, started 5 min ago".
 */
export function RunTime({
  run,
}: {
  run: { status: 'IN_PROGRESS' | 'FINISHED'; startedAt: string; finishedAt: string | null };
}) {
  return run.status === 'FINISHED' && run.finishedAt ? (
    <>
      finished <RelativeTime iso={run.finishedAt} />
    </>
  ) : (
    <>
      in progress, started <RelativeTime iso={run.startedAt} />
    </>
  );
}
