import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { useApi } from '../../../session-context';
import { counted, ErrorMessage, formatMs, Loading } from '../../../ui/components';
import { usePagedRows } from '../../../ui/paged-rows';
import { TestMark } from '../../../ui/test-health';
import { PHONE, useMediaQuery } from '../../../ui/use-media-query';
import { nextSort, parseSort, sortInWords } from '../../../ui/url-state';
import { useMarkedTests } from '../tests/queries';
import { AttemptBadge, AttemptList } from './Attempts';
import type { Filters, SetFilters } from './filters';

/** Rows a page of the API holds, and a row's height: the virtualised table reads 100 rows at a time. */
const PAGE_SIZE = 100;
const ROW_HEIGHT = 40;
/** On a phone, a row is two lines: the test's name across it, its status and duration under it (styles.css). */
const PHONE_ROW_HEIGHT = 60;

const COLUMNS: { field: string; label: string; className: string }[] = [
  { field: 'name', label: 'Test', className: 'c-name' },
  { field: 'suite', label: 'Suite', className: 'c-suite' },
  { field: 'status', label: 'Status', className: 'c-status' },
  { field: 'durationMs', label: 'Duration', className: 'c-duration' },
];

/** Where a result opens: a page of its own, which leads back to the results as they were filtered. */
export function resultPath(runId: number, resultId: number): string {
  return `/runs/${runId}/results/${resultId}`;
}

/** What the run page hands a result's page in the history entry: its view, to return to. */
export interface FromResults {
  /** The run page's query (filters and sort), `?…` or ''. */
  search: string;
}

/**
 * The results in a virtualised table: only the rows in view (and a few around them) are in the page, and only
 * the API pages that hold them are read, so a run of 100,000 results scrolls as one of 100. A result's name links
 * to its page; the one last opened stays marked on the way back. Flaky and quarantined tests are marked beside
 * their names (the project's list of them read once, when the project is known).
 */
export function ResultsTable({
  runId,
  projectId,
  filters,
  set,
  onRows,
}: {
  runId: number;
  /** The run's project, once the run is read: whose flaky and quarantined tests to mark. */
  projectId?: number;
  filters: Filters;
  set: SetFilters;
  /** Told once the first rows have answered (shown, or failed: what waits for them must not wait forever). */
  onRows: () => void;
}) {
  const api = useApi();
  const marks = useMarkedTests(projectId);
  const location = useLocation();
  const rowHeight = useMediaQuery(PHONE) ? PHONE_ROW_HEIGHT : ROW_HEIGHT;
  const opened = (location.state as { opened?: number } | null)?.opened;
  const scroller = useRef<HTMLDivElement>(null);
  const [window, setWindow] = useState<{ first: number; last: number }>();
  // The retried tests whose attempts are open in their row (by the outcome's id).
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
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
    estimateSize: () => rowHeight,
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
  const toggle = useCallback(
    (id: number) => {
      setOpen((current) => {
        const next = new Set(current);
        if (!next.delete(id)) {
          next.add(id);
        }
        return next;
      });
      // A row closed is one row high again: forget the heights measured.
      virtualizer.measure();
    },
    [virtualizer],
  );
  useEffect(() => {
    // A phone turned to or from the width of two-line rows: every row's place again.
    virtualizer.measure();
  }, [rowHeight, virtualizer]);
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
  const from: FromResults = { search: location.search };
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
          {marks.partial ? ' (flaky and quarantined tests marked among the first 500 of the project)' : ''}
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
              const expanded = r !== undefined && open.has(r.id);
              const retried = r !== undefined && (r.attempts ?? 1) > 1;
              return (
                <div
                  role="row"
                  key={item.key}
                  ref={expanded ? virtualizer.measureElement : undefined}
                  data-index={item.index}
                  aria-rowindex={item.index + 2}
                  className={[
                    'vrow',
                    r && opened === r.id ? 'selected' : '',
                    expanded ? 'expanded' : '',
                    retried ? 'retried' : '',
                  ]
                    .filter(Boolean)
                    .join(' ')}
                  style={{
                    transform: `translateY(${item.start}px)`,
                    height: expanded ? undefined : rowHeight,
                  }}
                  data-testid={r ? `result-${r.id}` : undefined}
                >
                  {r ? (
                    <>
                      <div role="cell" className="c-name">
                        {retried ? (
                          <button
                            type="button"
                            className="expander"
                            aria-expanded={expanded}
                            aria-controls={expanded ? `attempts-${r.id}` : undefined}
                            onClick={() => toggle(r.id)}
                          >
                            <span aria-hidden="true">{expanded ? '▾' : '▸'}</span>
                            <span className="visually-hidden">
                              {expanded ? 'Hide' : 'Show'} the {r.attempts} attempts of {r.name}
                            </span>
                          </button>
                        ) : null}
                        <Link to={resultPath(runId, r.id)} state={from} title={r.name} dir="auto">
                          {r.name}
                        </Link>
                        <TestMark {...marks.get(r.testId)} />
                      </div>
                      <div role="cell" className="c-suite" title={r.suite}>
                        {r.suite}
                      </div>
                      <div role="cell" className="c-status">
                        <span className={`status status-${r.status.toLowerCase()}`}>
                          {r.status.toLowerCase()}
                        </span>{' '}
                        <AttemptBadge result={r} />
                      </div>
                      <div role="cell" className="c-duration">
                        {formatMs(r.durationMs)}
                      </div>
                      {expanded ? (
                        <div role="cell" className="c-attempts" id={`attempts-${r.id}`}>
                          <AttemptList runId={runId} resultId={r.id} />
                        </div>
                      ) : null}
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
