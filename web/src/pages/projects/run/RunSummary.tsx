import { useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import type { Run } from '../../../api/client';
import type { LiveEvent } from '../../../live/merge';
import { useLiveProject } from '../../../live/useLiveProject';
import { formatDate, formatDuration } from '../../../ui/components';
import type { RunCounts } from '../../../api/client';
import { CiLink, ciLink } from '../../../ui/ci-link';
import { counted } from '../../../ui/components';
import { CountBar, PassRate } from '../../../ui/CountBar';
import { useThrottled } from '../../../ui/use-throttled';
import { Attributes } from '../ProjectRuns';
import { FailureGroups } from './FailureGroups';
import { PassedOnRetry } from './PassedOnRetry';
import { RunGate } from './RunGate';
import type { Filters, SetFilters } from './filters';

/**
 * The run's counts (live while it is in progress), duration and attributes, its quality gate, and its failures by
 * cause.
 */
export function RunSummary({
  run,
  filters,
  set,
  groups,
}: {
  run: Run;
  filters: Filters;
  set: SetFilters;
  /** Whether to read the failure groups yet. */
  groups: boolean;
}) {
  const queries = useQueryClient();
  const refresh = useThrottled(
    useCallback(() => {
      for (const key of ['run', 'gate', 'results', 'groups', 'suites']) {
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
          {outcomeCounts(run.counts)} · pass rate <PassRate counts={run.counts} /> ·{' '}
          {run.status === 'FINISHED' && run.finishedAt
            ? `finished ${formatDate(run.finishedAt)}, took ${formatDuration(run.startedAt, run.finishedAt)}`
            : `in progress since ${formatDate(run.startedAt)}`}
        </p>
        {run.stream || ciLink(run.attributes) ? (
          <p className="run-where">
            {run.stream ? (
              <>
                Stream <span className="stream-tag">{run.stream}</span>{' '}
              </>
            ) : null}
            <CiLink attributes={run.attributes} name={run.name} />
          </p>
        ) : null}
        <Attributes attributes={run.attributes} />
      </div>
      <RunGate run={run} />
      {failures > 0 ? (
        <FailureGroups
          runId={run.id}
          projectId={run.projectId}
          enabled={groups}
          active={filters.group}
          page={Number(filters.gpage || 0)}
          onPage={(p) => set({ gpage: String(p), group: filters.group }, { replace: true })}
          onPick={(group) => set({ group, status: '', suite: '', q: '' })}
        />
      ) : null}
      {run.counts.passedOnRetry > 0 ? (
        <PassedOnRetry runId={run.id} count={run.counts.passedOnRetry} />
      ) : null}
    </>
  );
}

/**
 * A run's counts by outcome, the last attempt of each test: "800 tests: 790 passed (3 on retry), 5 failed, 0
 * broken, 5 skipped · 803 attempts". A retried test is one test: its earlier attempts only add to the attempts.
 */
export function outcomeCounts(counts: RunCounts): string {
  const retried = counts.passedOnRetry ?? 0;
  const parts = [
    `${counts.passed.toLocaleString()} passed${retried ? ` (${retried.toLocaleString()} passed on retry)` : ''}`,
    `${counts.failed.toLocaleString()} failed`,
    `${counts.broken.toLocaleString()} broken`,
    `${counts.skipped.toLocaleString()} skipped`,
  ];
  const attempts = counts.attempts ?? counts.total;
  const extra = attempts > counts.total ? ` · ${counted(attempts, 'attempt')}` : '';
  return `${counted(counts.total, 'test')}: ${parts.join(', ')}${extra}`;
}
