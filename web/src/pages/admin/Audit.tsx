import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
// The service's own list: the filter offers every type the trail records.
import { AUDIT_TYPES as TYPES } from '../../../../src/audit/audit.events';
import type { AuditEvent } from '../../api/client';
import { useApi } from '../../session-context';
import { formatDate, Loaded, noItems, Page, Pager } from '../../ui/components';
import { AdminNav } from './AdminNav';

/** The audit trail at /admin/audit: filters live in the URL, so a filtered view can be shared. */
export function AdminAudit() {
  const api = useApi();
  const [params, setParams] = useSearchParams();
  const filters = {
    type: params.get('type') ?? '',
    actorId: params.get('actorId') ?? '',
    from: params.get('from') ?? '',
    to: params.get('to') ?? '',
    page: Number(params.get('page') ?? 0),
  };
  const set = (changes: Partial<typeof filters>) => {
    const next = { ...filters, page: 0, ...changes };
    setParams(
      Object.fromEntries(
        Object.entries(next)
          .filter(([, v]) => v !== '' && v !== 0)
          .map(([k, v]) => [k, String(v)]),
      ),
    );
  };
  const events = useQuery({
    queryKey: ['audit', filters],
    queryFn: () =>
      api.audit({
        type: filters.type || undefined,
        actorId: filters.actorId || undefined,
        from: filters.from ? new Date(filters.from).toISOString() : undefined,
        to: filters.to ? new Date(filters.to).toISOString() : undefined,
        page: filters.page,
      }),
    placeholderData: keepPreviousData,
  });
  return (
    <Page title="Audit">
      <AdminNav />
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the audit trail">
        <div className="field">
          <label htmlFor="audit-type">Type</label>
          <select id="audit-type" value={filters.type} onChange={(e) => set({ type: e.target.value })}>
            <option value="">All types</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="audit-actor">User id</label>
          <input
            id="audit-actor"
            inputMode="numeric"
            value={filters.actorId}
            onChange={(e) => set({ actorId: e.target.value.replace(/\D/g, '') })}
          />
        </div>
        <div className="field">
          <label htmlFor="audit-from">From</label>
          <input
            id="audit-from"
            type="datetime-local"
            value={filters.from}
            onChange={(e) => set({ from: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="audit-to">To</label>
          <input
            id="audit-to"
            type="datetime-local"
            value={filters.to}
            onChange={(e) => set({ to: e.target.value })}
          />
        </div>
      </form>
      <Loaded
        query={events}
        what="Loading events"
        isEmpty={noItems}
        empty={<>No events match these filters.</>}
      >
        {(data) => (
          <>
            <div className="table-wrap">
              <table className="audit stacked">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Type</th>
                    <th scope="col">Who</th>
                    <th scope="col">From</th>
                    <th scope="col">What</th>
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((e) => (
                    <tr key={e.id}>
                      <td className="audit-when">{formatDate(e.at)}</td>
                      <td>
                        <button
                          type="button"
                          className="link"
                          onClick={() => set({ type: e.type })}
                          title="Show only this type"
                        >
                          {e.type}
                        </button>
                      </td>
                      <td data-label="Who">{e.actorEmail ?? (e.actorId ? `user #${e.actorId}` : '—')}</td>
                      <td data-label="From">{e.ip ?? '—'}</td>
                      <td data-label="What" className="audit-what">
                        {describe(e) || '—'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={filters.page} totalPages={data.totalPages} onPage={(page) => set({ page })} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

/**
 * The target (by name where it has one: "project Web shop", not "project:1") and details of an event in a line;
 * repeated rate-limit hits show their count.
 */
function describe(e: AuditEvent): string {
  const details = { ...e.details };
  const count = typeof details.count === 'number' && details.count > 1 ? ` ×${details.count}` : '';
  delete details.count;
  const rest = Object.entries(details)
    // A value that is an object on one line, with spaces to wrap at ({ "gate": { "enabled": true } }).
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v, null, 1).replace(/\n\s*/g, ' ')}`)
    .join(', ');
  return [targetInWords(e), rest].filter(Boolean).join(' · ') + count;
}

/** "project Web shop", "user ada@example.com"; the service's own words for one that is gone; else the target. */
function targetInWords(e: AuditEvent): string | null {
  const [, kind, id] = e.target?.match(/^(project|group|user):(\d+)$/) ?? [];
  if (!e.targetLabel || !kind) {
    return e.targetLabel ?? e.target;
  }
  return e.targetLabel === `${kind} #${id} (deleted)` ? e.targetLabel : `${kind} ${e.targetLabel}`;
}
