import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import type { Change, Comparison, TestChange } from '../../api/client';
import { useApi } from '../../session-context';
import { ErrorMessage, formatDate, Loaded, Loading, noItems, Page, Pager } from '../../ui/components';
import { TestMark } from '../../ui/test-health';
import { useUrlState } from '../../ui/url-state';
import { useMarkedTests } from './tests/queries';

const KEYS = ['base', 'change', 'page'] as const;

/** The ways a test can change between two runs, as the page names them, with the summary's field for each. */
export const CHANGE_VIEWS: {
  change: Change;
  label: string;
  count: keyof Comparison['summary'];
  tone: string;
}[] = [
  { change: 'NEW_FAILURE', label: 'New failures', count: 'newFailures', tone: 'bad' },
  { change: 'FIXED', label: 'Fixed', count: 'fixed', tone: 'good' },
  { change: 'STILL_FAILING', label: 'Still failing', count: 'stillFailing', tone: 'bad' },
  { change: 'FLAKY', label: 'Flaky', count: 'flaky', tone: 'warn' },
  { change: 'ADDED', label: 'Added', count: 'added', tone: '' },
  { change: 'REMOVED', label: 'Removed', count: 'removed', tone: '' },
  { change: 'UNCHANGED', label: 'Unchanged', count: 'unchanged', tone: '' },
];

/**
 * Two runs side by side: how many tests newly fail, are fixed, still fail, flip, were added or removed, and the
 * tests of one of those. By default the run is compared with the run before it; another can be chosen.
 */
export function ComparePage() {
  const api = useApi();
  const runId = Number(useParams().runId);
  const [state, set] = useUrlState(KEYS);
  const base = state.base ? Number(state.base) : undefined;
  const comparison = useQuery({
    queryKey: ['compare', runId, base],
    queryFn: () => api.compare(runId, base),
    placeholderData: keepPreviousData,
  });
  const head = comparison.data?.head;
  return (
    <Page title={head ? `Compare ${head.name}` : 'Compare runs'}>
      {head ? (
        <nav className="links" aria-label="Run">
          <Link to={`/runs/${runId}`}>← Back to the run</Link>
          <Link to={`/projects/${head.projectId}`}>All runs of the project</Link>
        </nav>
      ) : null}
      <Loaded query={comparison} what="Comparing">
        {(data) => (
          <CompareView
            comparison={data}
            chosenBase={state.base !== ''}
            change={state.change}
            page={Number(state.page || 0)}
            set={set}
          />
        )}
      </Loaded>
    </Page>
  );
}

export function CompareView({
  comparison,
  chosenBase = false,
  change,
  page,
  set,
}: {
  comparison: Comparison;
  /** Whether the base was chosen (`?base=`), rather than the API's default: the run before in the stream. */
  chosenBase?: boolean;
  change: string;
  page: number;
  set: (changes: Partial<Record<(typeof KEYS)[number], string>>) => void;
}) {
  const api = useApi();
  const { head, base, summary } = comparison;
  const chosen = (change || firstNonEmpty(summary)) as Change;
  // The choice: the stream's recent runs (those comparable with this one), or every run when a base from another
  // stream was chosen by hand.
  const stream = head.stream;
  const runs = useQuery({
    queryKey: ['runs', head.projectId, 'for-compare', stream ?? ''],
    queryFn: () => api.listRuns(head.projectId, { size: 50, sort: 'startedAt,desc', stream }),
  });
  const tests = useQuery({
    queryKey: ['compare-tests', head.id, base?.id ?? null, chosen, page],
    queryFn: () => api.compareTests(head.id, { base: base?.id, change: chosen, page }),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <div className="card compare-head">
        <div className="field">
          <label htmlFor="compare-base">Compared with</label>
          <select
            id="compare-base"
            value={base ? String(base.id) : ''}
            onChange={(e) => set({ base: e.target.value, change: '' })}
          >
            {base ? null : <option value="">(no run before in the stream)</option>}
            {base && !runs.data?.content.some((r) => r.id === base.id) ? (
              <option value={String(base.id)}>{base.name}</option>
            ) : null}
            {(runs.data?.content ?? [])
              .filter((r) => r.id !== head.id)
              .map((r) => (
                <option key={r.id} value={String(r.id)}>
                  {r.name} · {formatDate(r.startedAt)}
                </option>
              ))}
          </select>
        </div>
        <p className="compare-against">
          {base && !chosenBase ? (
            <>
              Against the run before in <span className="stream-tag">{stream ?? 'its stream'}</span>
            </>
          ) : base ? (
            <>
              Against a run chosen
              {base.stream && base.stream !== stream ? (
                <>
                  {' '}
                  of another stream, <span className="stream-tag">{base.stream}</span>
                </>
              ) : null}{' '}
              <button type="button" className="link" onClick={() => set({ base: '', change: '' })}>
                Back to the run before
              </button>
            </>
          ) : (
            <>
              No run before this one in <span className="stream-tag">{stream ?? 'its stream'}</span>
            </>
          )}
        </p>
        <p className="hint">
          {base ? (
            <>
              <Link to={`/runs/${base.id}`}>{base.name}</Link> ({formatDate(base.startedAt)}) →{' '}
              <Link to={`/runs/${head.id}`}>{head.name}</Link> ({formatDate(head.startedAt)})
              {comparison.sameRevision
                ? ` · both of commit ${head.attributes.commit}: a test that flipped counts as flaky`
                : ''}
            </>
          ) : (
            'This is the first finished run of its stream: every test in it is new. Choose another run to compare with.'
          )}
        </p>
      </div>
      <ul className="change-tabs" aria-label="Changes">
        {CHANGE_VIEWS.map((v) => (
          <li key={v.change}>
            <button
              type="button"
              className={`change-tab tone-${v.tone || 'plain'}`}
              aria-pressed={v.change === chosen}
              onClick={() => set({ change: v.change, base: base ? String(base.id) : '' })}
            >
              <span className="change-count">{summary[v.count]}</span> {v.label}
            </button>
          </li>
        ))}
      </ul>
      <h2>{CHANGE_VIEWS.find((v) => v.change === chosen)?.label}</h2>
      {tests.isPending ? (
        <Loading what="Loading the tests" />
      ) : tests.error || !tests.data ? (
        <ErrorMessage error={tests.error} />
      ) : noItems(tests.data) ? (
        <p className="empty">No tests changed this way.</p>
      ) : (
        <>
          <ChangesTable items={tests.data.content} projectId={head.projectId} />
          <Pager
            page={page}
            totalPages={tests.data.totalPages}
            onPage={(p) => set({ page: String(p), change: chosen, base: base ? String(base.id) : '' })}
          />
        </>
      )}
    </>
  );
}

function firstNonEmpty(summary: Comparison['summary']): Change {
  return CHANGE_VIEWS.find((v) => summary[v.count] > 0)?.change ?? 'NEW_FAILURE';
}

/** The tests that changed, flaky and quarantined ones marked beside their names. */
export function ChangesTable({ items, projectId }: { items: TestChange[]; projectId: number }) {
  const marks = useMarkedTests(projectId);
  return (
    <div className="table-wrap">
      {/* On a phone, stacked: the test, then before and now on one line, then the message across the width. */}
      <table className="stacked changes">
        <thead>
          <tr>
            <th scope="col">Test</th>
            <th scope="col">Before</th>
            <th scope="col">Now</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {items.map((t) => (
            <tr key={t.testId}>
              <td className="c-name-cell">
                <Link to={`/projects/${projectId}/tests/${t.testId}`} dir="auto">
                  {t.name}
                </Link>
                <TestMark {...marks.get(t.testId)} />
                {t.suite ? <span className="hint block">{t.suite}</span> : null}
              </td>
              <td className="c-before" data-label="Before">
                <StatusText status={t.baseStatus} />
              </td>
              <td className="c-now" data-label="Now">
                <StatusText status={t.headStatus} />
              </td>
              <td className="message-cell">{t.message ? <code>{t.message}</code> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function StatusText({ status }: { status: string | null }) {
  return status ? (
    <span className={`status status-${status.toLowerCase()}`}>{status.toLowerCase()}</span>
  ) : (
    <span className="hint">absent</span>
  );
}
