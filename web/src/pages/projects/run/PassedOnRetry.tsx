import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'react-router';
import type { Result } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, Loaded } from '../../../ui/components';
import { type FromResults, resultPath } from './ResultsTable';

/** Failed attempts read at once: a run's retries are few beside its tests; the API's largest page. */
const ATTEMPTS_READ = 500;

/** A test that passed after failing: its failed attempts (first to last), of which the first names it. */
export interface RetriedTest {
  testId: number;
  name: string;
  suite: string;
  failures: Result[];
}

/**
 * The tests that passed on retry, from the run's failed and broken attempts (`?attempts=all&status=FAILED,BROKEN`):
 * those of earlier attempts (not an outcome) whose test has no failing outcome in the list. What they failed with
 * is kept: a pass on retry is a flaky test's signature, never a failure of the run.
 */
export function retriedTests(failedAttempts: Result[]): RetriedTest[] {
  const failing = new Set(failedAttempts.filter((r) => r.outcome).map((r) => r.testId));
  const tests = new Map<number, RetriedTest>();
  for (const r of failedAttempts) {
    if (r.outcome || failing.has(r.testId)) {
      continue;
    }
    const test = tests.get(r.testId) ?? { testId: r.testId, name: r.name, suite: r.suite, failures: [] };
    test.failures.push(r);
    tests.set(r.testId, test);
  }
  // By name as people read it: "case 2" before "case 10".
  return [...tests.values()].sort((a, b) => NAMES.compare(a.name, b.name) || a.testId - b.testId);
}

const NAMES = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** Retried tests listed before "Show all": the run's results come after them. */
const SHOWN = 10;

/** The run's tests that passed on retry, in a list of their own: marked, and never among the failures. */
export function PassedOnRetry({ runId, count }: { runId: number; count: number }) {
  const api = useApi();
  const location = useLocation();
  const attempts = useQuery({
    queryKey: ['results', runId, 'failed-attempts'],
    queryFn: () =>
      api.listResults(runId, {
        attempts: 'all',
        status: 'FAILED,BROKEN',
        size: ATTEMPTS_READ,
        sort: 'name,asc',
      }),
  });
  const from: FromResults = { search: location.search };
  const [all, setAll] = useState(false);
  return (
    <section aria-labelledby="retried-title" className="card">
      <h2 id="retried-title">
        Passed on retry <span className="badge badge-retry">{count.toLocaleString()}</span>
      </h2>
      <p className="hint">
        These tests failed, then passed when run again: they count as passed, not as failures. A test that
        does this often is flaky.
      </p>
      <Loaded query={attempts} what="Loading the retried tests">
        {(data) => {
          const tests = retriedTests(data.content);
          return tests.length === 0 ? (
            <p className="empty">
              Their failed attempts are not in this run’s first {ATTEMPTS_READ} failed attempts.
            </p>
          ) : (
            <>
              <ul className="retried-list" data-testid="passed-on-retry">
                {(all ? tests : tests.slice(0, SHOWN)).map((t) => (
                  <li key={t.testId}>
                    <Link to={resultPath(runId, t.failures[0].id)} state={from}>
                      {t.name}
                    </Link>{' '}
                    <span className="badge badge-retry">passed on retry</span>
                    <span className="hint block">
                      {t.suite ? `${t.suite} · ` : ''}
                      {counted(t.failures.length, 'failed attempt')}
                      {t.failures[0].message ? ': ' : ''}
                      {t.failures[0].message ? (
                        <code className="retried-message" title={t.failures[0].message}>
                          {t.failures[0].message.split('\n')[0]}
                        </code>
                      ) : null}
                    </span>
                  </li>
                ))}
              </ul>
              {!all && tests.length > SHOWN ? (
                <button type="button" className="link" onClick={() => setAll(true)}>
                  Show all {tests.length.toLocaleString()}
                </button>
              ) : null}
              {tests.length < count ? (
                <p className="hint">
                  {tests.length} of {count} shown: the others failed beyond the first {ATTEMPTS_READ} failed
                  attempts.
                </p>
              ) : null}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
