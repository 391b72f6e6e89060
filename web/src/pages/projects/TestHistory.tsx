import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link, useParams } from 'react-router';
import {
  type HistoryItem,
  failedAttempt,
  historyStatusText as statusText,
  isFailure,
  passedOnRetry,
} from '../../api/client';
import { useApi } from '../../session-context';
import { Loaded, noItems, Page, Pager } from '../../ui/components';
import { StateBadge } from '../../ui/test-health';
import { useUrlState } from '../../ui/url-state';
import { DurationChart } from '../../ui/charts';
import { flips } from './flips';
import { TestHealth } from './tests/TestHealth';

/**
 * A test case across runs: its health (state, flake rate, quarantine with its reason and who set it, and the
 * controls to quarantine or release it for MAINTAINERs), a pass/fail strip, its duration chart, how often it flipped,
 * its last failure.
 */
export function TestHistory() {
  const api = useApi();
  const params = useParams();
  const projectId = Number(params.projectId);
  const testId = Number(params.testId);
  const [state, set] = useUrlState(['page'] as const);
  const page = Number(state.page || 0);
  const history = useQuery({
    queryKey: ['history', projectId, testId, page],
    queryFn: () => api.testHistory(projectId, testId, page),
    placeholderData: keepPreviousData,
  });
  const test = useQuery({
    queryKey: ['test', projectId, testId],
    queryFn: () => api.getTest(projectId, testId),
  });
  const name = test.data?.name ?? history.data?.content[0]?.name ?? `Test ${testId}`;
  const suite = test.data?.suite ?? history.data?.content[0]?.suite;
  return (
    <Page
      title={name}
      actions={
        test.data?.state ? <StateBadge state={test.data.state} auto={test.data.quarantine?.auto} /> : null
      }
    >
      {suite ? <p className="hint test-suite-line">{suite}</p> : null}
      <nav className="links" aria-label="Project">
        <Link to={`/projects/${projectId}/tests`}>← All tests of the project</Link>
        <Link to={`/projects/${projectId}`}>All runs</Link>
      </nav>
      {test.data ? <TestHealth projectId={projectId} test={test.data} /> : null}
      <Loaded
        query={history}
        what="Loading the history"
        isEmpty={noItems}
        empty="This test has no results yet."
      >
        {(data) => (
          <>
            <HistoryView items={data.content} older={page > 0} />
            {/* Older runs, 100 at a time: page 2 is the 100 before the latest 100. */}
            <Pager page={page} totalPages={data.totalPages} onPage={(p) => set({ page: String(p) })} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

const failed = (i: HistoryItem) => isFailure(i.status);

function HistoryView({ items, older }: { items: HistoryItem[]; older: boolean }) {
  // Oldest first, as time goes.
  const ordered = useMemo(() => items.slice().reverse(), [items]);
  const labels = useMemo(() => ordered.map((i) => i.runName), [ordered]);
  const durations = useMemo(() => ordered.map((i) => i.durationMs), [ordered]);
  // A failed attempt counts: a test that passes only on retry has failed, in each of those runs.
  const lastFailure = items.find((i) => failed(i) || passedOnRetry(i));
  const attempt = lastFailure && !failed(lastFailure) ? failedAttempt(lastFailure) : undefined;
  const shown = attempt ?? lastFailure;
  const flipped = flips(ordered);
  const retried = items.filter(passedOnRetry).length;
  return (
    <>
      <h2>
        {older ? `${items.length} earlier runs` : `Last ${items.length} run${items.length === 1 ? '' : 's'}`}
      </h2>
      <ol className="strip" aria-label="Status in each run, oldest first">
        {ordered.map((i) => (
          <li
            key={i.id}
            className={`strip-${i.status.toLowerCase()}${passedOnRetry(i) ? ' strip-retried' : ''}`}
            title={`${i.runName}: ${statusText(i)}`}
          >
            <Link to={`/runs/${i.runId}`}>
              <span className="visually-hidden">
                {i.runName}: {statusText(i)}
              </span>
            </Link>
          </li>
        ))}
      </ol>
      <p>
        {flipped === 0
          ? 'Its outcome did not change in these runs: '
          : `Its outcome changed ${flipped} time${flipped > 1 ? 's' : ''} in these runs. `}
        {items.filter((i) => i.status === 'PASSED').length} passed of{' '}
        {items.filter((i) => i.status !== 'SKIPPED').length} that ran
        {retried ? `, ${retried} of them only on retry (the strip's red-topped bars)` : ''}.
      </p>
      <h2>Duration</h2>
      {durations.some((d) => d !== null) ? (
        <DurationChart labels={labels} durations={durations} />
      ) : (
        <p className="empty">No durations were reported in these runs.</p>
      )}
      <h2>Last failure</h2>
      {lastFailure && shown ? (
        <section className="card history-failure" aria-label="The last failure">
          <p>
            In <Link to={`/runs/${lastFailure.runId}`}>{lastFailure.runName}</Link>
            {attempt
              ? `, attempt ${attempt.retry + 1} of ${lastFailure.attempts.length} (${attempt.status.toLowerCase()}); it passed on retry`
              : null}
          </p>
          {shown.message ? <pre className="trace message">{shown.message}</pre> : null}
          {shown.trace ? <pre className="trace">{shown.trace}</pre> : null}
        </section>
      ) : (
        <p className="empty">It has not failed in these runs.</p>
      )}
    </>
  );
}
