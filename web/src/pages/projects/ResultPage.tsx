import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useLocation, useParams } from 'react-router';
import type { Attempt, ResultDetail } from '../../api/client';
import { useApi } from '../../session-context';
import { ErrorMessage, failedTitle, formatDate, formatMs, Loading, Page } from '../../ui/components';
import { CopyButton } from '../../ui/CopyButton';
import { type FromResults, resultPath } from './run/ResultsTable';
import { TriageBadge } from './failures/triage';

/**
 * One result on a page of its own (a link to it can be shared): its status, message and stack trace in full, wrapped
 * to the screen's width and copyable, its attributes, and the attempts of its test in the run. It leads back to the
 * run's results as they were filtered when it was opened.
 */
export function ResultPage() {
  const api = useApi();
  const params = useParams();
  const runId = Number(params.runId);
  const resultId = Number(params.resultId);
  const location = useLocation();
  const from = location.state as FromResults | null;
  const run = useQuery({ queryKey: ['run', runId], queryFn: () => api.getRun(runId) });
  const result = useQuery({
    queryKey: ['result', runId, resultId],
    queryFn: () => api.getResult(runId, resultId),
  });
  useEffect(() => {
    window.scrollTo?.(0, 0);
  }, [resultId]);
  const back = (
    <nav className="links" aria-label="Result">
      <Link to={`/runs/${runId}${from?.search ?? ''}`} state={{ opened: resultId }}>
        ← Results of {run.data ? run.data.name : `run ${runId}`}
      </Link>
      {result.data && run.data ? (
        <Link to={`/projects/${run.data.projectId}/tests/${result.data.testId}`}>History of this test</Link>
      ) : null}
    </nav>
  );
  if (result.isPending) {
    return (
      <Page title="Result">
        {back}
        <Loading what="Loading the result" />
      </Page>
    );
  }
  if (result.error || !result.data) {
    return (
      <Page title={failedTitle('Result', result.error)}>
        {back}
        <ErrorMessage error={result.error} onRetry={() => void result.refetch()} />
      </Page>
    );
  }
  return (
    <Page title={result.data.name}>
      {back}
      <ResultDetails result={result.data} projectId={run.data?.projectId} />
    </Page>
  );
}

/** What a result says, each part under a heading of its own. */
export function ResultDetails({ result, projectId }: { result: ResultDetail; projectId?: number }) {
  const attributes = Object.entries(result.attributes ?? {});
  return (
    <>
      <div className="card result-facts">
        <dl className="facts-inline">
          <div>
            <dt>Status</dt>
            <dd>
              <span className={`status status-${result.status.toLowerCase()}`}>
                {result.status.toLowerCase()}
              </span>
            </dd>
          </div>
          <div>
            <dt>Suite</dt>
            <dd>{result.suite || '—'}</dd>
          </div>
          <div>
            <dt>Duration</dt>
            <dd>{formatMs(result.durationMs)}</dd>
          </div>
          <div>
            <dt>Attempt</dt>
            <dd>{result.retry ? `retry ${result.retry}` : 'first'}</dd>
          </div>
          {result.startedAt ? (
            <div>
              <dt>Started</dt>
              <dd>{formatDate(result.startedAt)}</dd>
            </div>
          ) : null}
          {result.failure && projectId !== undefined ? (
            // Its cause across runs: where it is triaged, its history and the tests it hits.
            <div>
              <dt>Failure</dt>
              <dd>
                <Link to={`/projects/${projectId}/failures/${result.failure.signatureId}`}>
                  #{result.failure.signatureId}
                </Link>{' '}
                <TriageBadge triage={result.failure.triage} />
                {result.failure.isNew ? <span className="badge badge-new">new</span> : null}
              </dd>
            </div>
          ) : null}
        </dl>
      </div>
      {result.message || result.trace ? null : (
        <p className="empty">No message or stack trace was reported for this result.</p>
      )}
      {result.message ? (
        <TextBlock id="message" title="Message" what="message" text={result.message} tone="message" />
      ) : null}
      {result.trace ? (
        <TextBlock id="trace" title="Stack trace" what="stack trace" text={result.trace} />
      ) : null}
      {attributes.length ? (
        <section aria-labelledby="attributes-title">
          <h2 id="attributes-title">Attributes</h2>
          <dl className="attributes">
            {attributes.map(([key, value]) => (
              <div key={key}>
                <dt>{key}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </section>
      ) : null}
      {result.attempts.length > 1 ? (
        <Attempts runId={result.runId} current={result.id} attempts={result.attempts} />
      ) : null}
    </>
  );
}

/** A long text (a message, a trace) wrapped to the width there is, even inside a long token, with a copy button. */
function TextBlock({
  id,
  title,
  what,
  text,
  tone,
}: {
  id: string;
  title: string;
  what: string;
  text: string;
  tone?: 'message';
}) {
  return (
    <section aria-labelledby={`${id}-title`} className="text-block">
      <div className="text-head">
        <h2 id={`${id}-title`}>{title}</h2>
        <CopyButton text={text} what={what} />
      </div>
      <pre className={tone ? `trace full ${tone}` : 'trace full'} data-testid={id}>
        {text}
      </pre>
    </section>
  );
}

/** The attempts of the result's test in this run, in order; each but this one links to its page. */
function Attempts({ runId, current, attempts }: { runId: number; current: number; attempts: Attempt[] }) {
  const location = useLocation();
  return (
    <section aria-labelledby="attempts-title">
      <h2 id="attempts-title">Attempts in this run</h2>
      <ol className="attempts">
        {attempts.map((a, i) => {
          const text = (
            <>
              Attempt {i + 1}
              {a.retry ? ` (retry ${a.retry})` : ''}:{' '}
              <span className={`status status-${a.status.toLowerCase()}`}>{a.status.toLowerCase()}</span> ·{' '}
              {formatMs(a.durationMs)}
            </>
          );
          return (
            <li key={a.id}>
              {a.id === current ? (
                <span aria-current="page">{text} (this one)</span>
              ) : (
                <Link to={resultPath(runId, a.id)} state={location.state as FromResults | null}>
                  {text}
                </Link>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
