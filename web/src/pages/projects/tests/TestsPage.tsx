import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { Link, useParams } from 'react-router';
import { roleAtLeast, TEST_STATES, type TestCase, type TestState } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, Loaded, noItems, Page, Pager, PastLastPage } from '../../../ui/components';
import { outcomeOf, OutcomeLine, said } from '../../../ui/outcome';
import { RelativeTime } from '../../../ui/relative-time';
import { SearchField } from '../../../ui/SearchField';
import { useFocusLater } from '../../../ui/use-focus-later';
import { FlakeRate, quarantineSpan, STATE_LABELS, STATE_MEANINGS, StateBadge } from '../../../ui/test-health';
import { nextSort, parseSort, sortInWords, useUrlState } from '../../../ui/url-state';
import { ProjectNav } from '../ProjectNav';
import { useQuarantineActions, testKeys } from './queries';
import { QuarantineForm } from './QuarantineForm';
import { RecentStrip, STRIP_RUNS } from './RecentStrip';

const KEYS = ['q', 'state', 'sort', 'page'] as const;

/** Tests a page: each row reads its own strip once in view, so a page is at most this many history requests. */
export const TESTS_PAGE_SIZE = 20;

/** The sortable columns, and the sorts the phone's select offers (its headers are hidden there). */
const COLUMNS = [
  { field: 'name', label: 'Test' },
  { field: 'flakeRate', label: 'Flake rate' },
  { field: 'firstSeenAt', label: 'First seen' },
  { field: 'lastFailedAt', label: 'Last failed' },
] as const;
const SORTS: [string, string][] = [
  ['', 'suite, then name'],
  ['name,asc', 'name, A to Z'],
  ['name,desc', 'name, Z to A'],
  ['flakeRate,desc', 'flake rate, highest first'],
  ['flakeRate,asc', 'flake rate, lowest first'],
  ['lastFailedAt,desc', 'last failed, latest first'],
  ['lastFailedAt,asc', 'last failed, earliest first'],
  ['firstSeenAt,desc', 'first seen, newest first'],
  ['firstSeenAt,asc', 'first seen, oldest first'],
];

/** The states in the URL (`?state=FLAKY,QUARANTINED`), known ones only, in the badges' order. */
export function statesOf(param: string): TestState[] {
  const asked = new Set(param.split(','));
  return TEST_STATES.filter((s) => asked.has(s));
}

/**
 * A project's tests with their health: each one's state, flake rate, status in its last 20 runs, when it was first
 * seen and last failed; filtered by state and name, sorted and paged in the URL. MAINTAINERs quarantine a test from
 * its row (with a reason, and a last day if they like) and release it.
 */
export function TestsPage() {
  const api = useApi();
  const projectId = Number(useParams().projectId);
  const [filters, set] = useUrlState(KEYS);
  const page = Number(filters.page || 0);
  const states = statesOf(filters.state);
  const filtered = filters.q !== '' || states.length > 0;
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const query = {
    q: filters.q,
    state: states.join(','),
    sort: filters.sort,
    page,
    size: TESTS_PAGE_SIZE,
  };
  const tests = useQuery({
    queryKey: testKeys.list(projectId, query),
    queryFn: () => api.listTests(projectId, query),
    placeholderData: keepPreviousData,
  });
  const role = project.data?.role;
  const canQuarantine = role !== undefined && roleAtLeast(role, 'MAINTAINER');
  const { quarantine, release } = useQuarantineActions(projectId);
  // The row whose quarantine form is open, if any: one at a time.
  const [opened, setOpened] = useState<number>();
  // A closed form gives the focus back to its row's action (after a quarantine, Release once the list is read anew).
  const focusLater = useFocusLater();
  const closeForm = (id: number) => {
    focusLater(() => document.querySelector<HTMLElement>(`button[data-test-action="${id}"]`));
    setOpened(undefined);
  };
  const outcome = outcomeOf({
    quarantine: said(quarantine, (_, { test }) => `${test.name} is quarantined.`),
    release: said(release, (_, test) => `${test.name} is released from quarantine.`),
  });
  const toggleState = (state: TestState) => {
    const next = states.includes(state) ? states.filter((s) => s !== state) : [...states, state];
    set({ state: statesOf(next.join(',')).join(',') });
  };
  return (
    <Page title={project.data ? `Tests of ${project.data.name}` : 'Tests'}>
      {/* No way round a project that cannot be opened. */}
      {project.error ? null : <ProjectNav projectId={projectId} role={role} />}
      {/* Nothing to filter in a project that cannot be opened: its error alone, from the list below. */}
      {project.error ? null : (
        <div className="filters tests-filters" role="search" aria-label="Filter tests">
          <SearchField
            id="tests-q"
            label="Name"
            value={filters.q}
            placeholder="e.g. checkout"
            onSearch={(value) => set({ q: value }, { replace: true })}
          />
          <fieldset className="field state-filter">
            <legend>State</legend>
            <div className="state-options">
              {TEST_STATES.map((s) => (
                <label key={s} className={`state-option state-${s.toLowerCase()}`} title={STATE_MEANINGS[s]}>
                  <input type="checkbox" checked={states.includes(s)} onChange={() => toggleState(s)} />{' '}
                  {STATE_LABELS[s]}
                </label>
              ))}
            </div>
          </fieldset>
          <div className="field">
            <label htmlFor="tests-sort">Sort by</label>
            <select id="tests-sort" value={filters.sort} onChange={(e) => set({ sort: e.target.value })}>
              {SORTS.some(([value]) => value === filters.sort) ? null : (
                <option value={filters.sort}>{filters.sort}</option>
              )}
              {SORTS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
        </div>
      )}
      {/* A refused quarantine shows in its form, beside the reason typed. */}
      <OutcomeLine of={outcome} only={outcome.errorOf('quarantine') ? [] : undefined} />
      <Loaded
        query={tests}
        what="Loading tests"
        isEmpty={noItems}
        empty={
          // A page past the last (a stale link, tests removed since): the way back, not "no tests".
          tests.data && tests.data.totalElements > 0 ? (
            <PastLastPage page={page} list={tests.data} noun="test" onFirst={() => set({ page: '' })} />
          ) : filtered ? (
            <>
              No tests match these filters.{' '}
              <button type="button" className="link" onClick={() => set({ q: '', state: '' })}>
                Show every test
              </button>
            </>
          ) : (
            'No tests yet: a test appears here with its first result (through the API or an imported report).'
          )
        }
      >
        {(data) => (
          <>
            <p className="hint" aria-live="polite">
              {[counted(data.totalElements, 'test'), sortInWords(filters.sort, COLUMNS)]
                .filter(Boolean)
                .join(', ')}
            </p>
            <div className="table-wrap">
              <table className="tests">
                <caption className="visually-hidden">
                  Tests with their state, flake rate and last {STRIP_RUNS} runs
                </caption>
                <thead>
                  <tr>
                    <SortHeader column={COLUMNS[0]} sort={filters.sort} set={set} className="c-test" />
                    <th scope="col" className="c-state">
                      State
                    </th>
                    <SortHeader column={COLUMNS[1]} sort={filters.sort} set={set} className="c-rate" />
                    <th scope="col" className="c-strip">
                      Last {STRIP_RUNS} runs
                    </th>
                    <SortHeader column={COLUMNS[2]} sort={filters.sort} set={set} className="c-seen" />
                    <SortHeader column={COLUMNS[3]} sort={filters.sort} set={set} className="c-last-failed" />
                    {canQuarantine ? (
                      <th scope="col" className="c-actions">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    ) : null}
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((t) => (
                    <Fragment key={t.id}>
                      <TestRow
                        projectId={projectId}
                        test={t}
                        canQuarantine={canQuarantine}
                        formOpen={opened === t.id}
                        busy={
                          (release.isPending && release.variables?.id === t.id) ||
                          (quarantine.isPending && quarantine.variables?.test.id === t.id)
                        }
                        onQuarantine={() => {
                          quarantine.reset();
                          setOpened(opened === t.id ? undefined : t.id);
                        }}
                        onRelease={() => {
                          setOpened(undefined);
                          release.mutate(t);
                        }}
                      />
                      {opened === t.id ? (
                        <tr className="quarantine-row">
                          <td colSpan={canQuarantine ? 7 : 6}>
                            <QuarantineForm
                              testName={t.name}
                              pending={quarantine.isPending}
                              error={quarantine.error}
                              onCancel={() => closeForm(t.id)}
                              onSubmit={(request) =>
                                quarantine.mutate({ test: t, request }, { onSuccess: () => closeForm(t.id) })
                              }
                            />
                          </td>
                        </tr>
                      ) : null}
                    </Fragment>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={page} totalPages={data.totalPages} onPage={(p) => set({ page: String(p) })} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

function SortHeader({
  column,
  sort,
  set,
  className,
}: {
  column: { field: string; label: string };
  sort: string;
  set: (changes: { sort: string }) => void;
  className: string;
}) {
  const current = parseSort(sort);
  const active = current?.field === column.field ? current : undefined;
  return (
    <th
      scope="col"
      className={className}
      aria-sort={active ? (active.direction === 'asc' ? 'ascending' : 'descending') : undefined}
    >
      <button type="button" className="sort" onClick={() => set({ sort: nextSort(sort, column.field) })}>
        {column.label}
        <span aria-hidden="true">{active ? (active.direction === 'asc' ? ' ▲' : ' ▼') : ''}</span>
      </button>
    </th>
  );
}

function TestRow({
  projectId,
  test,
  canQuarantine,
  formOpen,
  busy,
  onQuarantine,
  onRelease,
}: {
  projectId: number;
  test: TestCase;
  canQuarantine: boolean;
  formOpen: boolean;
  busy: boolean;
  onQuarantine: () => void;
  onRelease: () => void;
}) {
  const q = test.quarantine;
  return (
    <tr data-testid={`test-${test.id}`} className={formOpen ? 'opened' : undefined}>
      <td className="c-test">
        <Link to={`/projects/${projectId}/tests/${test.id}`} className="test-name" dir="auto">
          {test.name}
        </Link>
        {test.suite ? <span className="hint block test-suite">{test.suite}</span> : null}
        {q ? (
          <span className="quarantine-line block" title={quarantineSpan(q)}>
            <span className="visually-hidden">Quarantined{q.auto ? ' automatically' : ''}: </span>
            {q.reason}
            {q.until ? (
              <span className="hint">
                {' '}
                · until <time dateTime={q.until}>{new Date(q.until).toLocaleDateString()}</time>
              </span>
            ) : null}
          </span>
        ) : null}
      </td>
      <td className="c-state">
        <StateBadge state={test.state} auto={q?.auto} />
      </td>
      <td className="c-rate">
        <span className="phone-only hint">flake rate </span>
        <FlakeRate rate={test.flakeRate} runs={test.runs} />
      </td>
      <td className="c-strip">
        <RecentStrip projectId={projectId} testId={test.id} />
      </td>
      <td className="c-seen">
        <span className="phone-only hint">first seen </span>
        {test.firstSeenAt ? <RelativeTime iso={test.firstSeenAt} /> : <span className="hint">—</span>}
      </td>
      <td className="c-last-failed">
        <span className="phone-only hint">last failed </span>
        {test.lastFailedAt ? <RelativeTime iso={test.lastFailedAt} /> : <span className="hint">never</span>}
      </td>
      {canQuarantine ? (
        <td className="c-actions">
          {q ? (
            <button
              type="button"
              className="secondary"
              aria-label={`Release ${test.name}`}
              data-test-action={test.id}
              disabled={busy}
              onClick={onRelease}
            >
              Release
            </button>
          ) : (
            <button
              type="button"
              className="secondary"
              aria-label={`Quarantine ${test.name}`}
              data-test-action={test.id}
              aria-expanded={formOpen}
              disabled={busy}
              onClick={onQuarantine}
            >
              Quarantine
            </button>
          )}
        </td>
      ) : null}
    </tr>
  );
}
