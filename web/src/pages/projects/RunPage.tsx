import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { type Run, roleAtLeast } from '../../api/client';
import { Link, useParams } from 'react-router';
import { useApi } from '../../session-context';
import { ErrorMessage, failedTitle, Loaded, Page } from '../../ui/components';
import { useUrlState } from '../../ui/url-state';
import { PinMarker } from './ProjectRuns';
import { RUN_KEYS } from './run/filters';
import { ResultFilters } from './run/ResultFilters';
import { ResultsTable } from './run/ResultsTable';
import { RunSummary } from './run/RunSummary';

export { FailureGroups } from './run/FailureGroups';
export { STATUS_FILTERS } from './run/filters';

/**
 * A run: its counts (live while it is in progress), its failures grouped by cause, and its results in a
 * virtualised table, filterable by status, suite and name, sortable; a result opens on its own page
 * (ResultPage).
 */
export function RunPage() {
  const api = useApi();
  const runId = Number(useParams().runId);
  const run = useQuery({ queryKey: ['run', runId], queryFn: () => api.getRun(runId) });
  const [filters, set] = useUrlState(RUN_KEYS);
  // The suites and the failure groups are read once the first rows are in: on a run of 100,000 results each
  // reads the whole run, and the rows come first.
  const [rowsShown, setRowsShown] = useState(false);
  const onRows = useCallback(() => setRowsShown(true), []);
  if (run.error) {
    return (
      <Page title={failedTitle('Run', run.error)}>
        <ErrorMessage error={run.error} onRetry={() => void run.refetch()} />
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
        {run.data ? <Link to={`/projects/${run.data.projectId}/tests`}>Tests of the project</Link> : null}
        <Link to={`/runs/${runId}/compare`}>Compare with the run before</Link>
        {run.data ? <PinControl run={run.data} /> : null}
        {run.data ? (
          <Link to={`/projects/${run.data.projectId}/failures`}>Failures of the project</Link>
        ) : null}
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
      <ResultsTable
        runId={runId}
        projectId={run.data?.projectId}
        filters={filters}
        set={set}
        onRows={onRows}
      />
    </Page>
  );
}

/**
 * Pin and unpin (MAINTAINERs): a pinned run is kept by the retention cleanup whatever its age. Others see whether it
 * is pinned.
 */
function PinControl({ run }: { run: Run }) {
  const api = useApi();
  const queries = useQueryClient();
  const project = useQuery({
    queryKey: ['project', run.projectId],
    queryFn: () => api.getProject(run.projectId),
  });
  const toggle = useMutation({
    mutationFn: async (pin: boolean) => {
      if (pin) {
        return api.pinRun(run.id);
      }
      await api.unpinRun(run.id);
      return { ...run, pinned: false };
    },
    onSuccess: (updated) => {
      queries.setQueryData(['run', run.id], updated);
      void queries.invalidateQueries({ queryKey: ['runs', run.projectId] });
    },
  });
  const canPin = project.data !== undefined && roleAtLeast(project.data.role, 'MAINTAINER');
  if (!canPin) {
    return run.pinned ? (
      <span className="pin-state">
        <PinMarker />
      </span>
    ) : null;
  }
  return (
    <span className="pin-state">
      {run.pinned ? <PinMarker /> : null}
      <button
        type="button"
        className="secondary"
        aria-pressed={run.pinned}
        disabled={toggle.isPending}
        title={
          run.pinned
            ? 'Let the retention policy remove this run when it is due'
            : 'Keep this run whatever the retention policy says'
        }
        onClick={() => toggle.mutate(!run.pinned)}
      >
        {run.pinned ? 'Unpin' : 'Pin'}
      </button>
      {toggle.error ? <ErrorMessage error={toggle.error} /> : null}
    </span>
  );
}
