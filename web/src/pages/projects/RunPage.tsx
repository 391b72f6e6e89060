import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import type { Result, Run } from '../../api/client';
import type { LiveEvent } from '../../live/merge';
import { useLiveProject } from '../../live/useLiveProject';
import { useApi } from '../../session-context';
import { formatDate, Loaded, noItems, Page, Pager } from '../../ui/components';
import { CountBar, passRate } from '../../ui/CountBar';

const STATUSES = ['', 'FAILED', 'BROKEN', 'PASSED', 'SKIPPED'];

/** A run: its counts (live while it is in progress) and its results, filterable by status, with traces. */
export function RunPage() {
  const api = useApi();
  const runId = Number(useParams().runId);
  const run = useQuery({ queryKey: ['run', runId], queryFn: () => api.getRun(runId) });
  return (
    <Loaded query={run} what="Loading the run">
      {(data) => <RunView run={data} />}
    </Loaded>
  );
}

function RunView({ run }: { run: Run }) {
  const api = useApi();
  const queries = useQueryClient();
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? '';
  const page = Number(params.get('page') ?? 0);
  const [open, setOpen] = useState<Result | undefined>();
  const results = useQuery({
    queryKey: ['results', run.id, status, page],
    queryFn: () => api.listResults(run.id, { status: status || undefined, page }),
    placeholderData: keepPreviousData,
  });
  const onEvent = useCallback(
    (event: LiveEvent) => {
      if (event.data.runId === run.id) {
        void queries.invalidateQueries({ queryKey: ['run', run.id] });
        void queries.invalidateQueries({ queryKey: ['results', run.id] });
      }
    },
    [queries, run.id],
  );
  const onResync = useCallback(
    () => void queries.invalidateQueries({ queryKey: ['run', run.id] }),
    [queries, run.id],
  );
  useLiveProject(run.projectId, onEvent, onResync);
  const set = (changes: Record<string, string>) => {
    const next = { status, page: '0', ...changes };
    setParams(Object.fromEntries(Object.entries(next).filter(([, v]) => v !== '' && v !== '0')));
  };
  return (
    <Page title={run.name}>
      <p>
        <Link to={`/projects/${run.projectId}`}>← All runs of the project</Link>
      </p>
      <div className="card facts-row">
        <CountBar counts={run.counts} />
        <p>
          {run.counts.total} results: {run.counts.passed} passed, {run.counts.failed} failed,{' '}
          {run.counts.broken} broken, {run.counts.skipped} skipped · pass rate {passRate(run.counts)} ·{' '}
          {run.status === 'FINISHED' ? `finished ${formatDate(run.finishedAt)}` : 'in progress'}
        </p>
        {Object.keys(run.attributes).length ? (
          <p className="hint">
            {Object.entries(run.attributes)
              .map(([k, v]) => `${k}: ${v}`)
              .join(' · ')}
          </p>
        ) : null}
      </div>
      <div className="field">
        <label htmlFor="result-status">Status</label>
        <select id="result-status" value={status} onChange={(e) => set({ status: e.target.value })}>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s ? s.toLowerCase() : 'all'}
            </option>
          ))}
        </select>
      </div>
      <Loaded query={results} what="Loading results" isEmpty={noItems} empty="No results match.">
        {(data) => (
          <>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Test</th>
                    <th scope="col">Suite</th>
                    <th scope="col">Status</th>
                    <th scope="col">Duration</th>
                    <th scope="col">
                      <span className="visually-hidden">History</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((r) => (
                    <tr key={r.id}>
                      <td>
                        <button
                          type="button"
                          className="link"
                          onClick={() => setOpen(open?.id === r.id ? undefined : r)}
                        >
                          {r.name}
                        </button>
                      </td>
                      <td>{r.suite}</td>
                      <td>
                        <span className={`status status-${r.status.toLowerCase()}`}>
                          {r.status.toLowerCase()}
                        </span>
                      </td>
                      <td>{r.durationMs === null ? '—' : `${r.durationMs} ms`}</td>
                      <td>
                        <Link to={`/projects/${run.projectId}/tests/${r.testId}`}>
                          History<span className="visually-hidden"> of {r.name}</span>
                        </Link>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={page} totalPages={data.totalPages} onPage={(p) => set({ page: String(p) })} />
          </>
        )}
      </Loaded>
      {open ? (
        <section className="card" aria-label={`Details of ${open.name}`}>
          <h2>{open.name}</h2>
          {open.message ? <p className="error">{open.message}</p> : null}
          {open.trace ? <pre className="trace">{open.trace}</pre> : <p className="hint">No trace.</p>}
        </section>
      ) : null}
    </Page>
  );
}
