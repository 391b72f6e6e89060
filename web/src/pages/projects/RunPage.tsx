import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import type { FailureGroup, Result, Run } from '../../api/client';
import type { LiveEvent } from '../../live/merge';
import { useLiveProject } from '../../live/useLiveProject';
import { useApi } from '../../session-context';
import {
  counted,
  ErrorMessage,
  formatDate,
  formatDuration,
  formatMs,
  Loaded,
  Loading,
  noItems,
  Page,
  Pager,
} from '../../ui/components';
import { CountBar, countsInWords, PassRate } from '../../ui/CountBar';
import { usePagedRows } from '../../ui/paged-rows';
import { nextSort, parseSort, sortInWords, useUrlState } from '../../ui/url-state';
import { SearchField } from '../../ui/SearchField';
import { Attributes } from './ProjectRuns';

const KEYS = ['status', 'suite', 'q', 'sort', 'group', 'gpage'] as const;
type Filters = Record<(typeof KEYS)[number], string>;

export const STATUS_FILTERS: [string, string][] = [
  ['', 'all'],
  ['FAILED,BROKEN', 'failures (failed or broken)'],
  ['FAILED', 'failed'],
  ['BROKEN', 'broken'],
  ['PASSED', 'passed'],
  ['SKIPPED', 'skipped'],
];

/** Rows a page of the API holds, and a row's height: the virtualised table reads 100 rows at a time. */
const PAGE_SIZE = 100;
const ROW_HEIGHT = 40;

/**
 * A run: its counts (live while it is in progress), its failures grouped by cause, and its results in a
 * virtualised table, filterable by status, suite and name, sortable, with each result's message and trace.
 */
export function RunPage() {
  const api = useApi();
  const runId = Number(useParams().runId);
  const run = useQuery({ queryKey: ['run', runId], queryFn: () => api.getRun(runId) });
  const [filters, set] = useUrlState(KEYS);
  const [open, setOpen] = useState<Result | undefined>();
  // The suites and the failure groups are read once the first rows are in: on a run of 100,000 results each
  // reads the whole run, and the rows come first.
  const [rowsShown, setRowsShown] = useState(false);
  if (run.error) {
    return (
      <Page title="Run not found">
        <ErrorMessage error={run.error} />
        <p>
          <Link to="/projects">All projects</Link>
        </p>
      </Page>
    );
  }
  return (
    <Page title={run.data?.name ?? `Run ${runId}`}>
      <nav className="links" aria-label="Run">
        <Link to={run.data ? `/projects/${run.data.projectId}` : '/projects'}>← All runs of the project</Link>
        <Link to={`/runs/${runId}/compare`}>Compare with the run before</Link>
      </nav>
      <Loaded query={run} what="Loading the run">
        {(data) => <RunSummary run={data} filters={filters} set={set} groups={rowsShown} />}
      </Loaded>
      {/* The results are read at once, beside the run: not after it. */}
      <h2 id="results-title">Results</h2>
      <ResultFilters runId={runId} filters={filters} set={set} suites={rowsShown} />
      {filters.group !== '' ? (
        <p className="notice" role="status">
          Showing the failures of one group: <code>{filters.group}</code>{' '}
          <button type="button" className="link" onClick={() => set({ group: '' })}>
            Show all results
          </button>
        </p>
      ) : null}
      <div className="run-body">
        <ResultsTable
          runId={runId}
          filters={filters}
          set={set}
          open={open}
          onOpen={setOpen}
          onRows={() => setRowsShown(true)}
        />
        {open ? (
          <ResultDetail result={open} projectId={run.data?.projectId} onClose={() => setOpen(undefined)} />
        ) : null}
      </div>
    </Page>
  );
}

/** The run's counts (live while it is in progress), duration and attributes, and its failures by cause. */
function RunSummary({
  run,
  filters,
  set,
  groups,
}: {
  run: Run;
  filters: Filters;
  set: (changes: Partial<Filters>, options?: { replace?: boolean }) => void;
  /** Whether to read the failure groups yet. */
  groups: boolean;
}) {
  const queries = useQueryClient();
  const refresh = useThrottled(
    useCallback(() => {
      for (const key of ['run', 'results', 'groups', 'suites']) {
        void queries.invalidateQueries({ queryKey: [key, run.id] });
      }
    }, [queries, run.id]),
    1000,
  );
  const onEvent = useCallback(
    (event: LiveEvent) => {
      if (event.data.runId === run.id) {
        refresh();
      }
    },
    [refresh, run.id],
  );
  useLiveProject(run.projectId, onEvent, refresh);
  const failures = run.counts.failed + run.counts.broken;
  return (
    <>
      <div className="card facts-row">
        <CountBar counts={run.counts} />
        <p>
          {countsInWords(run.counts)} · pass rate <PassRate counts={run.counts} /> ·{' '}
          {run.status === 'FINISHED' && run.finishedAt
            ? `finished ${formatDate(run.finishedAt)}, took ${formatDuration(run.startedAt, run.finishedAt)}`
            : `in progress since ${formatDate(run.startedAt)}`}
        </p>
        <Attributes attributes={run.attributes} />
      </div>
      {failures > 0 ? (
        <FailureGroups
          runId={run.id}
          enabled={groups}
          active={filters.group}
          page={Number(filters.gpage || 0)}
          onPage={(p) => set({ gpage: String(p), group: filters.group }, { replace: true })}
          onPick={(group) => set({ group, status: '', suite: '', q: '' })}
        />
      ) : null}
    </>
  );
}

/** `fn`, called at most once per `ms`: a burst of calls runs it at once and once more at the end. */
function useThrottled(fn: () => void, ms: number): () => void {
  const state = useRef<{ last: number; timer?: ReturnType<typeof setTimeout> }>({ last: 0 });
  useEffect(() => {
    const current = state.current;
    return () => clearTimeout(current.timer);
  }, []);
  return useCallback(() => {
    const s = state.current;
    const wait = s.last + ms - Date.now();
    if (wait <= 0) {
      s.last = Date.now();
      fn();
    } else if (!s.timer) {
      s.timer = setTimeout(() => {
        s.timer = undefined;
        s.last = Date.now();
        fn();
      }, wait);
    }
  }, [fn, ms]);
}

/** The run's failures grouped by their normalised message, largest group first; a group filters the table. */
export function FailureGroups({
  runId,
  enabled = true,
  active,
  page,
  onPage,
  onPick,
}: {
  runId: number;
  enabled?: boolean;
  active: string;
  page: number;
  onPage: (page: number) => void;
  onPick: (key: string) => void;
}) {
  const api = useApi();
  const groups = useQuery({
    queryKey: ['groups', runId, page],
    queryFn: () => api.failureGroups(runId, page),
    placeholderData: keepPreviousData,
    enabled,
  });
  return (
    <section aria-labelledby="groups-title" className="card">
      <h2 id="groups-title">Failures by cause</h2>
      <Loaded query={groups} what="Grouping failures" isEmpty={noItems} empty="No failures.">
        {(data) => (
          <>
            <p className="hint">
              {counted(data.totalElements, 'cause')}: failures with the same message, numbers, ids and
              temporary paths aside.
            </p>
            <ol className="groups-list">
              {data.content.map((g) => (
                <GroupItem key={g.key} group={g} active={g.key === active} onPick={() => onPick(g.key)} />
              ))}
            </ol>
            <Pager page={page} totalPages={data.totalPages} onPage={onPage} />
          </>
        )}
      </Loaded>
    </section>
  );
}

function GroupItem({ group, active, onPick }: { group: FailureGroup; active: boolean; onPick: () => void }) {
  return (
    <li className={active ? 'group active' : 'group'}>
      <span className="group-count">{group.count.toLocaleString()}</span>
      <div className="group-text">
        <code className="group-key">{group.key}</code>
        <span className="hint block">
          {counted(group.tests, 'test')}
          {group.failed ? ` · ${group.failed} failed` : ''}
          {group.broken ? ` · ${group.broken} broken` : ''}
        </span>
      </div>
      <button type="button" onClick={onPick} aria-pressed={active}>
        Show <span className="visually-hidden">the {group.count} failures of this group</span>
      </button>
    </li>
  );
}

function ResultFilters({
  runId,
  filters,
  set,
  suites: load,
}: {
  runId: number;
  filters: Filters;
  set: (changes: Partial<Filters>, options?: { replace?: boolean }) => void;
  /** Whether to read the run's suites yet. */
  suites: boolean;
}) {
  const api = useApi();
  const suites = useQuery({ queryKey: ['suites', runId], queryFn: () => api.suites(runId), enabled: load });
  return (
    <div className="filters" role="search" aria-label="Filter results">
      <SearchField
        id="result-q"
        label="Name"
        value={filters.q}
        placeholder="Search by name"
        onSearch={(q) => set({ q }, { replace: true })}
      />
      <div className="field">
        <label htmlFor="result-status">Status</label>
        <select id="result-status" value={filters.status} onChange={(e) => set({ status: e.target.value })}>
          {STATUS_FILTERS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="result-suite">Suite</label>
        <select
          id="result-suite"
          value={filters.suite}
          onChange={(e) => set({ suite: e.target.value })}
          disabled={!suites.data}
        >
          <option value="">all suites</option>
          {(suites.data?.content ?? [])
            .filter((s) => s.suite !== '')
            .map((s) => (
              <option key={s.suite} value={s.suite}>
                {s.suite} ({s.total}
                {s.failed ? `, ${s.failed} failing` : ''})
              </option>
            ))}
        </select>
      </div>
    </div>
  );
}

const COLUMNS: { field: string; label: string; className: string }[] = [
  { field: 'name', label: 'Test', className: 'c-name' },
  { field: 'suite', label: 'Suite', className: 'c-suite' },
  { field: 'status', label: 'Status', className: 'c-status' },
  { field: 'durationMs', label: 'Duration', className: 'c-duration' },
];

/**
 * The results in a virtualised table: only the rows in view (and a few around them) are in the page, and only
 * the API pages that hold them are read, so a run of 100,000 results scrolls as one of 100.
 */
function ResultsTable({
  runId,
  filters,
  set,
  open,
  onOpen,
  onRows,
}: {
  runId: number;
  filters: Filters;
  set: (changes: Partial<Filters>) => void;
  open: Result | undefined;
  onOpen: (result: Result | undefined) => void;
  /** Told once the first rows have answered (shown, or failed: what waits for them must not wait forever). */
  onRows: () => void;
}) {
  const api = useApi();
  const scroller = useRef<HTMLDivElement>(null);
  const [window, setWindow] = useState<{ first: number; last: number }>();
  const query = {
    status: filters.status,
    suite: filters.suite,
    q: filters.q,
    sort: filters.sort,
    group: filters.group,
  };
  const rows = usePagedRows(
    ['results', runId, query],
    PAGE_SIZE,
    (page) => api.listResults(runId, { ...query, page, size: PAGE_SIZE }),
    window,
  );
  // The table renders from the virtualizer on each scroll; nothing here is memoised by a compiler.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: rows.total ?? 0,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    // Until the scroller is measured (and where nothing is laid out, as in jsdom): the first screenful.
    initialRect: { width: 1000, height: 600 },
    onChange: (instance) => {
      const items = instance.getVirtualItems();
      if (!items.length) {
        return;
      }
      const first = Math.floor(items[0].index / PAGE_SIZE) * PAGE_SIZE;
      const last = Math.floor(items[items.length - 1].index / PAGE_SIZE) * PAGE_SIZE;
      setWindow((w) => (w?.first === first && w.last === last ? w : { first, last }));
    },
  });
  useEffect(() => {
    if (scroller.current) {
      scroller.current.scrollTop = 0;
    }
  }, [filters.status, filters.suite, filters.q, filters.sort, filters.group]);
  const answered = rows.total !== undefined || rows.error !== undefined;
  useEffect(() => {
    if (answered) {
      onRows();
    }
  }, [answered, onRows]);
  const sort = parseSort(filters.sort);
  const total = rows.total ?? 0;
  // The table stays in the page while a new filter's first page loads: the scroll position starts again from the
  // top with it, not from where the previous filter's rows had been scrolled to.
  return (
    <div className="results">
      {rows.isPending ? (
        <Loading what="Loading results" />
      ) : rows.total === undefined ? null : (
        <p className="hint" aria-live="polite">
          {total === 0
            ? 'No results match.'
            : [counted(total, 'result'), sortInWords(filters.sort, COLUMNS)].filter(Boolean).join(', ')}
        </p>
      )}
      <ErrorMessage error={rows.error} />
      <div
        className="vtable"
        role="table"
        aria-labelledby="results-title"
        aria-rowcount={total + 1}
        data-testid="results-table"
      >
        <div role="rowgroup" className="vhead">
          <div role="row" className="vrow" aria-rowindex={1}>
            {COLUMNS.map((c) => (
              <div
                role="columnheader"
                key={c.field}
                className={c.className}
                aria-sort={
                  sort?.field === c.field
                    ? sort.direction === 'asc'
                      ? 'ascending'
                      : 'descending'
                    : undefined
                }
              >
                <button
                  type="button"
                  className="sort"
                  onClick={() => set({ sort: nextSort(filters.sort, c.field) })}
                >
                  {c.label}
                  <span aria-hidden="true">
                    {sort?.field === c.field ? (sort.direction === 'asc' ? ' ▲' : ' ▼') : ''}
                  </span>
                </button>
              </div>
            ))}
          </div>
        </div>
        <div ref={scroller} className="vscroll">
          <div role="rowgroup" className="vbody" style={{ height: virtualizer.getTotalSize() }}>
            {virtualizer.getVirtualItems().map((item) => {
              const r = rows.row(item.index);
              return (
                <div
                  role="row"
                  key={item.key}
                  aria-rowindex={item.index + 2}
                  className={r && open?.id === r.id ? 'vrow selected' : 'vrow'}
                  style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
                  data-testid={r ? `result-${r.id}` : undefined}
                >
                  {r ? (
                    <>
                      <div role="cell" className="c-name">
                        <button
                          type="button"
                          className="link"
                          title={r.name}
                          onClick={() => onOpen(open?.id === r.id ? undefined : r)}
                          aria-expanded={open?.id === r.id}
                        >
                          {r.name}
                        </button>
                      </div>
                      <div role="cell" className="c-suite" title={r.suite}>
                        {r.suite}
                      </div>
                      <div role="cell" className="c-status">
                        <span className={`status status-${r.status.toLowerCase()}`}>
                          {r.status.toLowerCase()}
                          {r.retry ? ` (retry ${r.retry})` : ''}
                        </span>
                      </div>
                      <div role="cell" className="c-duration">
                        {formatMs(r.durationMs)}
                      </div>
                    </>
                  ) : (
                    <div role="cell" className="c-loading">
                      <span className="skeleton" aria-hidden="true" />
                      <span className="visually-hidden">Loading</span>
                    </div>
                  )}
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </div>
  );
}

/** A result's message and stack trace, monospace, with a link to the test's history. */
function ResultDetail({
  result,
  projectId,
  onClose,
}: {
  result: Result;
  projectId: number | undefined;
  onClose: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [result.id]);
  return (
    <section className="card detail" aria-labelledby="detail-title">
      <div className="page-head">
        <h2 id="detail-title" ref={heading} tabIndex={-1}>
          {result.name}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="hint">
        {result.suite ? `${result.suite} · ` : ''}
        <span className={`status status-${result.status.toLowerCase()}`}>
          {result.status.toLowerCase()}
        </span>{' '}
        · {formatMs(result.durationMs)}
        {result.retry ? ` · retry ${result.retry}` : ''} ·{' '}
        {projectId ? (
          <Link to={`/projects/${projectId}/tests/${result.testId}`}>History of this test</Link>
        ) : null}
      </p>
      {result.message ? (
        <>
          <h3>Message</h3>
          <pre className="trace message">{result.message}</pre>
        </>
      ) : null}
      {result.trace ? (
        <>
          <h3>Stack trace</h3>
          <pre className="trace">{result.trace}</pre>
        </>
      ) : (
        <p className="hint">No stack trace.</p>
      )}
    </section>
  );
}
