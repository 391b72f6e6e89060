import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { Link, useParams } from 'react-router';
import type { Page as ApiPage, Run } from '../../api/client';
import { type LiveEvent, mergeRunEvent } from '../../live/merge';
import { useLiveProject } from '../../live/useLiveProject';
import { useApi } from '../../session-context';
import { counted, formatDate, formatDuration, Loaded, noItems, Page, Pager } from '../../ui/components';
import { CountBar, PassRate } from '../../ui/CountBar';
import { PassRateChart } from '../../ui/charts';
import { SearchField } from '../../ui/SearchField';
import { useUrlState } from '../../ui/url-state';

const KEYS = ['q', 'status', 'page'] as const;

/**
 * A project's runs, newest first, filterable by name and status (held in the URL), updated live: runs created or
 * finished and results added appear as they happen. Above them, the pass rate over the latest runs.
 */
export function ProjectRuns() {
  const api = useApi();
  const queries = useQueryClient();
  const projectId = Number(useParams().projectId);
  const [filters, set] = useUrlState(KEYS);
  const page = Number(filters.page || 0);
  const filtered = filters.q !== '' || filters.status !== '';
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const runs = useQuery({
    queryKey: ['runs', projectId, filters],
    queryFn: () =>
      api.listRuns(projectId, { q: filters.q, status: filters.status, page, sort: 'startedAt,desc' }),
    placeholderData: keepPreviousData,
  });
  const trend = useQuery({ queryKey: ['trend', projectId], queryFn: () => api.trend(projectId, 30) });
  const onEvent = useCallback(
    (event: LiveEvent) => {
      if (event.event === 'run.created' && filtered) {
        // Whether the new run matches the filters is the API's to say.
        void queries.invalidateQueries({ queryKey: ['runs', projectId] });
      } else {
        queries.setQueriesData<ApiPage<Run>>({ queryKey: ['runs', projectId] }, (old) =>
          old ? mergeRunEvent(old, event) : old,
        );
      }
      if (event.event !== 'results.added') {
        void queries.invalidateQueries({ queryKey: ['trend', projectId] });
        void queries.invalidateQueries({ queryKey: ['project', projectId] });
      }
    },
    [queries, projectId, filtered],
  );
  const onResync = useCallback(() => {
    void queries.invalidateQueries({ queryKey: ['runs', projectId] });
    void queries.invalidateQueries({ queryKey: ['trend', projectId] });
  }, [queries, projectId]);
  const live = useLiveProject(projectId, onEvent, onResync);
  const name = project.data?.name ?? `Project ${projectId}`;
  const role = project.data?.role;
  return (
    <Page
      title={name}
      actions={
        <span className={`live live-${live}`} role="status">
          {live === 'live' ? '● Live' : live === 'connecting' ? 'Connecting…' : 'Offline: reconnecting'}
        </span>
      }
    >
      <nav className="links" aria-label="Project">
        {role && role !== 'VIEWER' ? <Link to={`/projects/${projectId}/import`}>Import a report</Link> : null}
        <Link to={`/projects/${projectId}/members`}>Members</Link>
      </nav>
      <section aria-labelledby="trend-title">
        <h2 id="trend-title">Pass rate</h2>
        <Loaded query={trend} what="Loading the trend">
          {(data) =>
            data.points.length >= 2 ? (
              <PassRateChart points={data.points} />
            ) : (
              <p className="hint">The trend shows once the project has two runs.</p>
            )
          }
        </Loaded>
      </section>
      <h2>Runs</h2>
      <RunFilters q={filters.q} status={filters.status} set={set} />
      <Loaded
        query={runs}
        what="Loading runs"
        isEmpty={noItems}
        empty={
          filtered
            ? 'No runs match these filters.'
            : 'No runs yet: send results through the API (V1, V2) or import a report.'
        }
      >
        {(data) => (
          <>
            <p className="hint" aria-live="polite">
              {counted(data.totalElements, 'run')}
            </p>
            {/* On a phone each run is a card (styles.css): its name, counts and pass rate, nothing off-screen. */}
            <div className="table-wrap">
              <table className="runs">
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Results</th>
                    <th scope="col">Pass rate</th>
                    <th scope="col" className="hide-phone">
                      Duration
                    </th>
                    <th scope="col" className="hide-phone">
                      Started
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((run) => (
                    <tr key={run.id} data-testid={`run-${run.id}`}>
                      <td className="c-run">
                        <Link to={`/runs/${run.id}`}>{run.name}</Link>
                        <span className="hint block">
                          {run.status === 'FINISHED' ? 'finished' : 'in progress'}
                          <span className="phone-only"> {formatDate(run.startedAt)}</span>
                          {' · '}
                          <Link to={`/runs/${run.id}/compare`}>
                            compare<span className="visually-hidden"> {run.name} with the run before</span>
                          </Link>
                        </span>
                        <Attributes attributes={run.attributes} />
                      </td>
                      <td className="c-counts">
                        <div className="counts-cell">
                          <CountBar counts={run.counts} />
                          <span className="hint">{run.counts.total.toLocaleString()}</span>
                        </div>
                      </td>
                      <td className="c-rate">
                        <span className="phone-only hint">pass rate </span>
                        <PassRate counts={run.counts} />
                      </td>
                      <td className="hide-phone">
                        {run.finishedAt ? formatDuration(run.startedAt, run.finishedAt) : '—'}
                      </td>
                      <td className="hide-phone">{formatDate(run.startedAt)}</td>
                    </tr>
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

/** The name search (applied as one types, after a pause) and the status filter. */
export function RunFilters({
  q,
  status,
  set,
}: {
  q: string;
  status: string;
  set: (changes: { q?: string; status?: string }, options?: { replace?: boolean }) => void;
}) {
  return (
    <div className="filters" role="search" aria-label="Filter runs">
      <SearchField
        id="run-q"
        label="Name"
        value={q}
        placeholder="e.g. nightly"
        onSearch={(value) => set({ q: value }, { replace: true })}
      />
      <div className="field">
        <label htmlFor="run-status">Status</label>
        <select id="run-status" value={status} onChange={(e) => set({ status: e.target.value })}>
          <option value="">any</option>
          <option value="IN_PROGRESS">in progress</option>
          <option value="FINISHED">finished</option>
        </select>
      </div>
    </div>
  );
}

export function Attributes({ attributes }: { attributes: Record<string, string> }) {
  const entries = Object.entries(attributes);
  if (!entries.length) {
    return null;
  }
  return (
    <ul className="chips" aria-label="Attributes">
      {entries.map(([k, v]) => (
        <li key={k}>
          <span className="chip-key">{k}</span> {v}
        </li>
      ))}
    </ul>
  );
}
