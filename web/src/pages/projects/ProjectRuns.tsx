import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useCallback } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import type { Page as ApiPage, Run, Stream } from '../../api/client';
import { type LiveEvent, mergeRunEvent } from '../../live/merge';
import { useLiveProject } from '../../live/useLiveProject';
import { NotifyMe } from './notifications/NotifyMe';
import { useApi } from '../../session-context';
import { CI_ATTRIBUTES, CiLink, ciLink } from '../../ui/ci-link';
import {
  counted,
  ErrorMessage,
  formatDuration,
  Loaded,
  noItems,
  Page,
  Pager,
  PastLastPage,
} from '../../ui/components';
import { CountBar, PassRate } from '../../ui/CountBar';
import { GateBadge } from '../../ui/gate';
import { PassRateChart } from '../../ui/charts';
import { RunTime } from '../../ui/relative-time';
import { SearchField } from '../../ui/SearchField';
import { useUrlState } from '../../ui/url-state';
import { ProjectNav } from './ProjectNav';

const KEYS = ['q', 'status', 'stream', 'page'] as const;

/**
 * A project's runs, newest first, filterable by stream, name and status (held in the URL), updated live: runs
 * created or finished and results added appear as they happen. Above them, the pass rate over the latest runs of
 * the stream shown (the project's default stream while all are listed): runs of different jobs, branches or
 * environments are not one trend.
 */
export function ProjectRuns() {
  const api = useApi();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const projectId = Number(useParams().projectId);
  const [filters, set] = useUrlState(KEYS);
  const page = Number(filters.page || 0);
  const filtered = filters.q !== '' || filters.status !== '' || filters.stream !== '';
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const streams = useQuery({ queryKey: ['streams', projectId], queryFn: () => api.listStreams(projectId) });
  const runs = useQuery({
    queryKey: ['runs', projectId, filters],
    queryFn: () =>
      api.listRuns(projectId, {
        q: filters.q,
        status: filters.status,
        stream: filters.stream,
        page,
        sort: 'startedAt,desc',
      }),
    placeholderData: keepPreviousData,
  });
  // A stream in the URL that the project does not have (a link from elsewhere, a typo): no trend to draw of it.
  const unknownStream =
    filters.stream !== '' &&
    streams.data !== undefined &&
    !streams.data.some((s) => s.stream === filters.stream);
  const trendStream = filters.stream || defaultStream(project.data?.latestRun?.stream, streams.data);
  const trend = useQuery({
    queryKey: ['trend', projectId, trendStream ?? ''],
    queryFn: () => api.trend(projectId, 30, trendStream),
    // Until the streams are known, which stream the trend is of is not.
    enabled: filters.stream !== '' || (!streams.isPending && !project.isPending),
  });
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
        void queries.invalidateQueries({ queryKey: ['streams', projectId] });
      }
    },
    [queries, projectId, filtered],
  );
  const onResync = useCallback(() => {
    void queries.invalidateQueries({ queryKey: ['runs', projectId] });
    void queries.invalidateQueries({ queryKey: ['trend', projectId] });
    void queries.invalidateQueries({ queryKey: ['streams', projectId] });
  }, [queries, projectId]);
  const live = useLiveProject(projectId, onEvent, onResync);
  const name = project.data?.name ?? `Project ${projectId}`;
  const role = project.data?.role;
  const openRun = useCallback((runId: number) => void navigate(`/runs/${runId}`), [navigate]);
  if (project.error) {
    // A project that cannot be opened (gone, never there, not yours): said once, with nothing to filter or follow.
    return (
      <Page title={name}>
        <ErrorMessage error={project.error} />
        <p>
          <Link to="/">Go to your projects</Link>
        </p>
      </Page>
    );
  }
  return (
    <Page
      title={name}
      actions={
        <>
          <NotifyMe projectId={projectId} compact />
          <span className={`live live-${live}`} role="status">
            {live === 'live' ? '● Live' : live === 'connecting' ? 'Connecting…' : 'Offline: reconnecting'}
          </span>
        </>
      }
    >
      <ProjectNav projectId={projectId} role={role} />
      {/* The stream picks the trend and the runs both: above both, with the runs' own filters beside it. */}
      <RunFilters q={filters.q} status={filters.status} set={set}>
        <StreamPicker stream={filters.stream} streams={streams} onPick={(stream) => set({ stream })} />
      </RunFilters>
      <section aria-labelledby="trend-title" hidden={unknownStream}>
        <h2 id="trend-title" className="trend-title">
          Pass rate{' '}
          {trendStream ? (
            <span className="hint">
              of {trendStream}
              {filters.stream ? '' : ' (the default stream)'}
            </span>
          ) : null}
        </h2>
        {trend.fetchStatus === 'idle' && trend.isPending ? (
          <div className="chart chart-pending" />
        ) : (
          <Loaded query={trend} what="Loading the trend">
            {(data) =>
              data.points.length >= 2 ? (
                <PassRateChart points={data.points} onOpen={openRun} />
              ) : (
                <p className="hint">
                  The trend shows once {trendStream ? 'the stream' : 'the project'} has two finished runs.
                </p>
              )
            }
          </Loaded>
        )}
      </section>
      <h2 id="runs-title">Runs</h2>
      <Loaded
        query={runs}
        what="Loading runs"
        isEmpty={noItems}
        empty={
          // A page past the last (a stale link, runs deleted since): the way back, not "no runs".
          runs.data && runs.data.totalElements > 0 ? (
            <PastLastPage page={page} list={runs.data} noun="run" onFirst={() => set({ page: '' })} />
          ) : filters.stream !== '' && filters.q === '' && filters.status === '' ? (
            <>
              No runs in the stream <q>{filters.stream}</q>.{' '}
              <button type="button" className="link" onClick={() => set({ stream: '' })}>
                Show every stream
              </button>
            </>
          ) : filtered ? (
            'No runs match these filters.'
          ) : (
            'No runs yet: send results through the API (V1, V2) or import a report.'
          )
        }
      >
        {(data) => (
          <>
            <p className="hint" aria-live="polite">
              {counted(data.totalElements, 'run')}
              {filters.stream ? ` in ${filters.stream}` : ''}
            </p>
            <RunsTable runs={data.content} showStream={!filters.stream} />
            <Pager page={page} totalPages={data.totalPages} onPage={(p) => set({ page: String(p) })} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

/**
 * The stream the trend shows while every run is listed: the project's default (the stream of its latest run as
 * the projects list shows it), else the stream with the most runs.
 */
export function defaultStream(latest: string | undefined, streams: Stream[] | undefined): string | undefined {
  if (latest) {
    return latest;
  }
  if (!streams?.length) {
    return undefined;
  }
  return streams.reduce((best, s) => (s.runs > best.runs ? s : best)).stream;
}

/**
 * The stream shown, as a select held in the URL (`?stream=`): every stream of the project with its number of
 * runs. A project of one stream has nothing to choose: its name is said instead.
 */
export function StreamPicker({
  stream,
  streams,
  onPick,
}: {
  stream: string;
  streams: { data?: Stream[]; error: unknown; isPending: boolean };
  onPick: (stream: string) => void;
}) {
  const list = streams.data ?? [];
  if (streams.error) {
    return (
      <div className="stream-picker">
        <ErrorMessage error={streams.error} />
      </div>
    );
  }
  if (!streams.isPending && list.length <= 1 && !stream) {
    return list.length === 1 ? (
      <p className="stream-picker hint">
        One stream: <span className="stream-tag">{list[0].stream}</span>
      </p>
    ) : null;
  }
  const known = list.some((s) => s.stream === stream);
  return (
    <div className="stream-picker field">
      <label htmlFor="run-stream">Stream</label>
      <select
        id="run-stream"
        value={stream}
        onChange={(e) => onPick(e.target.value)}
        disabled={streams.isPending}
      >
        <option value="">every stream{list.length ? ` (${list.length})` : ''}</option>
        {stream && !known ? <option value={stream}>{stream}</option> : null}
        {list.map((s) => (
          <option key={s.stream} value={s.stream}>
            {s.stream} · {counted(s.runs, 'run')}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A pinned run's mark: kept by the retention cleanup whatever its age. */
export function PinMarker() {
  return (
    <span className="pin-marker" title="Pinned: kept whatever the retention policy says">
      pinned
    </span>
  );
}

/**
 * The runs, one line each so that many fit a screen: name, stream, when (relative, exact on hover), the CI build,
 * its quality gate, the failures (and how many are new against the run before), the pass rate, the counts and the duration. On a phone each run is a card (styles.css).
 */
export function RunsTable({ runs, showStream }: { runs: Run[]; showStream: boolean }) {
  return (
    <div className="table-wrap">
      <table className="runs">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col" className="c-failed">
              Failed
            </th>
            <th scope="col">Pass rate</th>
            <th scope="col">Results</th>
            <th scope="col" className="hide-phone">
              Duration
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => {
            const failed = run.counts.failed + run.counts.broken;
            return (
              <tr key={run.id} data-testid={`run-${run.id}`}>
                <td className="c-run">
                  <div className="run-line">
                    <Link to={`/runs/${run.id}`} className="run-name" dir="auto">
                      {run.name}
                    </Link>
                    <RunGateBadge run={run} />
                    {run.pinned ? <PinMarker /> : null}
                    {showStream && run.stream ? (
                      <Link
                        to={`?stream=${encodeURIComponent(run.stream)}`}
                        className="stream-tag"
                        title={`Show only the runs of ${run.stream}`}
                      >
                        <span className="visually-hidden">stream</span> {run.stream}
                      </Link>
                    ) : null}
                  </div>
                  <span className="hint run-meta">
                    <RunTime run={run} />
                    {' · '}
                    <Link to={`/runs/${run.id}/compare`}>
                      compare<span className="visually-hidden"> {run.name} with the run before</span>
                    </Link>
                    {ciLink(run.attributes) ? (
                      <>
                        {' · '}
                        <CiLink attributes={run.attributes} name={run.name} />
                      </>
                    ) : null}
                    <OtherAttributes attributes={run.attributes} />
                  </span>
                </td>
                <td className="c-failed">
                  <span className={failed ? 'failed-count bad' : 'failed-count'}>
                    {failed.toLocaleString()}
                    <span className="phone-only"> failed</span>
                  </span>
                  {run.newFailures ? (
                    <Link
                      to={`/runs/${run.id}/compare?change=NEW_FAILURE`}
                      className="new-failures block"
                      title="Failing now, not in the run before in its stream"
                      aria-label={`${run.newFailures.toLocaleString()} new ${run.newFailures === 1 ? 'failure' : 'failures'} in ${run.name}`}
                    >
                      {run.newFailures.toLocaleString()} new
                    </Link>
                  ) : null}
                  {run.counts.passedOnRetry ? (
                    <span className="hint block" title="Passed on retry: not counted as failed">
                      +{run.counts.passedOnRetry.toLocaleString()} on retry
                    </span>
                  ) : null}
                </td>
                <td className="c-rate">
                  <span className="phone-only hint">pass rate </span>
                  <PassRate counts={run.counts} />
                </td>
                <td className="c-counts">
                  <div className="counts-cell">
                    <CountBar counts={run.counts} />
                    <span className="hint">{run.counts.total.toLocaleString()}</span>
                  </div>
                </td>
                <td className="hide-phone c-duration">
                  {run.finishedAt ? formatDuration(run.startedAt, run.finishedAt) : '—'}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A run's gate on the list: passed or failed once it is decided; pending only for a finished run not evaluated yet
 * (a run in progress says so already); nothing when the project turned the gate off.
 */
function RunGateBadge({ run }: { run: Run }) {
  const { status } = run.gate;
  if (status === 'OFF' || (status === 'PENDING' && run.status !== 'FINISHED')) {
    return null;
  }
  return (
    <Link
      to={`/runs/${run.id}#gate-title`}
      className="gate-link"
      aria-label={`${gateWords[status]}: ${run.name}`}
    >
      <GateBadge status={status} short />
    </Link>
  );
}

const gateWords = { PASSED: 'Gate passed', FAILED: 'Gate failed', PENDING: 'Gate pending' } as const;

/** Attributes that neither the stream (branch, env) nor the CI link already show, e.g. the commit: inline. */
const SHOWN_ELSEWHERE = new Set(['branch', 'env', ...CI_ATTRIBUTES]);

function OtherAttributes({ attributes }: { attributes: Record<string, string> }) {
  const rest = Object.entries(attributes).filter(([k]) => !SHOWN_ELSEWHERE.has(k));
  if (!rest.length) {
    return null;
  }
  return (
    <span className="hide-phone">
      {rest.map(([k, v]) => (
        <span key={k} className="attr-inline">
          {' · '}
          <span className="chip-key">{k}</span>{' '}
          <span title={v}>{v.length > 12 ? `${v.slice(0, 12)}…` : v}</span>
        </span>
      ))}
    </span>
  );
}

/** The name search (applied as one types, after a pause) and the status filter. */
export function RunFilters({
  q,
  status,
  set,
  children,
}: {
  q: string;
  status: string;
  set: (changes: { q?: string; status?: string }, options?: { replace?: boolean }) => void;
  /** A filter before these (the stream). */
  children?: ReactNode;
}) {
  return (
    <div className="filters runs-filters" role="search" aria-label="Filter runs">
      {children}
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
