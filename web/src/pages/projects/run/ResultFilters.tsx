import { useQuery } from '@tanstack/react-query';
import { useApi } from '../../../session-context';
import { SearchField } from '../../../ui/SearchField';
import { type Filters, type SetFilters, STATUS_FILTERS } from './filters';

/** The results' filters: a name search (as one types), a status and a suite. */
export function ResultFilters({
  runId,
  filters,
  set,
  suites: load,
}: {
  runId: number;
  filters: Filters;
  set: SetFilters;
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
