import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import type { Page as ApiPage, Run } from '../../api/client';
import { type LiveEvent, mergeRunEvent } from '../../live/merge';
import { useLiveProject } from '../../live/useLiveProject';
import { useApi } from '../../session-context';
import { formatDate, Loaded, noItems, Page, Pager } from '../../ui/components';
import { CountBar, passRate } from '../../ui/CountBar';

/** A project's runs, newest first, updated live: runs created or finished and results added appear as they happen. */
export function ProjectRuns() {
  const api = useApi();
  const queries = useQueryClient();
  const projectId = Number(useParams().projectId);
  const [params, setParams] = useSearchParams();
  const page = Number(params.get('page') ?? 0);
  const project = useQuery({ queryKey: ['projects'], queryFn: () => api.listProjects() });
  const key = ['runs', projectId, page];
  const runs = useQuery({
    queryKey: key,
    queryFn: () => api.listRuns(projectId, page),
    placeholderData: keepPreviousData,
  });
  const onEvent = useCallback(
    (event: LiveEvent) => {
      queries.setQueriesData<ApiPage<Run>>({ queryKey: ['runs', projectId] }, (old) =>
        old ? mergeRunEvent(old, event) : old,
      );
    },
    [queries, projectId],
  );
  const onResync = useCallback(
    () => void queries.invalidateQueries({ queryKey: ['runs', projectId] }),
    [queries, projectId],
  );
  const live = useLiveProject(projectId, onEvent, onResync);
  const name = project.data?.content.find((p) => p.id === projectId)?.name ?? `Project ${projectId}`;
  return (
    <Page
      title={name}
      actions={
        <span className={`live live-${live}`}>
          {live === 'live' ? '● Live' : live === 'connecting' ? 'Connecting…' : 'Offline: reconnecting'}
        </span>
      }
    >
      <p>
        <Link to={`/projects/${projectId}/import`}>Import a report</Link>
      </p>
      <h2>Runs</h2>
      <Loaded
        query={runs}
        what="Loading runs"
        isEmpty={noItems}
        empty="No runs yet: send results through the API (V1, V2) or import a report."
      >
        {(data) => (
          <>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Status</th>
                    <th scope="col">Results</th>
                    <th scope="col">Pass rate</th>
                    <th scope="col">Started</th>
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((run) => (
                    <tr key={run.id} data-testid={`run-${run.id}`}>
                      <td>
                        <Link to={`/runs/${run.id}`}>{run.name}</Link>
                      </td>
                      <td>{run.status === 'FINISHED' ? 'finished' : 'in progress'}</td>
                      <td>
                        <div className="counts-cell">
                          <CountBar counts={run.counts} />
                          <span className="hint">{run.counts.total}</span>
                        </div>
                      </td>
                      <td>{passRate(run.counts)}</td>
                      <td>{formatDate(run.startedAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager
              page={page}
              totalPages={data.totalPages}
              onPage={(p) => setParams(p ? { page: String(p) } : {})}
            />
          </>
        )}
      </Loaded>
    </Page>
  );
}
