import { useQuery } from '@tanstack/react-query';
import { Link, useLocation } from 'react-router';
import { type Attempt, isFailure, type Result } from '../../../api/client';
import { useApi } from '../../../session-context';
import { ErrorMessage, formatMs, Loading } from '../../../ui/components';
import { type FromResults, resultPath } from './ResultsTable';

/** A retried test's row says so: "passed on retry" when it passed after a failed or broken attempt, else its number of attempts. */
export function AttemptBadge({ result }: { result: Pick<Result, 'attempts' | 'passedOnRetry'> }) {
  const attempts = result.attempts ?? 1;
  if (attempts <= 1) {
    return null;
  }
  // On a phone the status column is narrow: the badge's short form there (styles.css), the same words to a reader.
  return result.passedOnRetry ? (
    <span className="badge badge-retry" title={`passed on retry: ${attempts} attempts`}>
      <span className="badge-long">passed on retry</span>
      <span className="badge-short" aria-hidden="true">
        retried
      </span>
    </span>
  ) : (
    <span className="badge" title={`${attempts} attempts`}>
      <span className="badge-long">{attempts} attempts</span>
      <span className="badge-short" aria-hidden="true">
        ×{attempts}
      </span>
    </span>
  );
}

/**
 * The attempts of one test in the run, first to last, inside its row: each attempt's status, duration, message
 * and stack trace. The outcome's own page lists them (GET /api/runs/{runId}/results/{resultId}) without their
 * texts; a failed or broken attempt's are read from its own result.
 */
export function AttemptList({ runId, resultId }: { runId: number; resultId: number }) {
  const api = useApi();
  const detail = useQuery({
    queryKey: ['result', runId, resultId],
    queryFn: () => api.getResult(runId, resultId),
  });
  if (detail.isPending) {
    return <Loading what="Loading the attempts" />;
  }
  if (detail.error || !detail.data) {
    return <ErrorMessage error={detail.error} />;
  }
  const attempts = detail.data.attempts.length ? detail.data.attempts : [detail.data];
  return (
    <ol className="attempt-list" aria-label={`Attempts of ${detail.data.name}`}>
      {attempts.map((a, i) => (
        <AttemptItem key={a.id} runId={runId} attempt={a} index={i} last={i === attempts.length - 1} />
      ))}
    </ol>
  );
}

function AttemptItem({
  runId,
  attempt,
  index,
  last,
}: {
  runId: number;
  attempt: Attempt;
  index: number;
  last: boolean;
}) {
  const api = useApi();
  const location = useLocation();
  // A result's attempts carry no texts: a failed or broken attempt's message and trace are its own result's.
  const texts = useQuery({
    queryKey: ['result', runId, attempt.id],
    queryFn: () => api.getResult(runId, attempt.id),
    enabled: isFailure(attempt.status),
  });
  const message = texts.data?.message ?? null;
  const trace = texts.data?.trace ?? null;
  return (
    <li className="attempt" data-testid={`attempt-${attempt.id}`}>
      <div className="attempt-head">
        <Link to={resultPath(runId, attempt.id)} state={{ search: location.search } satisfies FromResults}>
          Attempt {index + 1}
          {attempt.retry ? ` (retry ${attempt.retry})` : ''}
        </Link>
        <span className={`status status-${attempt.status.toLowerCase()}`}>
          {attempt.status.toLowerCase()}
        </span>
        <span className="hint">{formatMs(attempt.durationMs)}</span>
        {last ? <span className="hint">the outcome</span> : null}
      </div>
      {message ? <pre className="trace attempt-message">{message}</pre> : null}
      {trace ? (
        <details className="attempt-trace">
          <summary>Stack trace</summary>
          <pre className="trace">{trace}</pre>
        </details>
      ) : null}
    </li>
  );
}
