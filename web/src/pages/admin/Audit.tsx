import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import type { AuditEvent } from '../../api/client';
import { useApi } from '../../session-context';
import { Empty, ErrorMessage, formatDate, Loading, Page, Pager } from '../../ui/components';
import { AdminNav } from './AdminNav';

const TYPES = [
  'LOGIN_SUCCESS',
  'LOGIN_FAILURE',
  'LOGOUT',
  'REFRESH_TOKEN_REUSE',
  'RATE_LIMIT_HIT',
  'PASSWORD_RESET',
  'EMAIL_VERIFIED',
  'TWO_FACTOR_ENABLED',
  'TWO_FACTOR_DISABLED',
  'TWO_FACTOR_FAILURE',
  'RECOVERY_CODE_USED',
  'API_TOKEN_CREATED',
  'API_TOKEN_REVOKED',
  'USER_UPDATED',
  'ROLE_CHANGED',
  'GROUP_CHANGED',
  'DIRECTORY_SYNC',
  'DIRECTORY_UNAVAILABLE',
];

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
    setParams(Object.fromEntries(Object.entries(next).filter(([, v]) => v !== '' && v !== 0).map(([k, v]) => [k, String(v)])));
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
          <input id="audit-actor" inputMode="numeric" value={filters.actorId} onChange={(e) => set({ actorId: e.target.value.replace(/\D/g, '') })} />
        </div>
        <div className="field">
          <label htmlFor="audit-from">From</label>
          <input id="audit-from" type="datetime-local" value={filters.from} onChange={(e) => set({ from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="audit-to">To</label>
          <input id="audit-to" type="datetime-local" value={filters.to} onChange={(e) => set({ to: e.target.value })} />
        </div>
      </form>
      {events.isPending ? (
        <Loading what="Loading events" />
      ) : events.error ? (
        <ErrorMessage error={events.error} />
      ) : events.data.content.length === 0 ? (
        <Empty>No events match these filters.</Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="audit">
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
                {events.data.content.map((e) => (
                  <tr key={e.id}>
                    <td>{formatDate(e.at)}</td>
                    <td>
                      <button type="button" className="link" onClick={() => set({ type: e.type })} title="Show only this type">
                        {e.type}
                      </button>
                    </td>
                    <td>{e.actorEmail ?? (e.actorId ? `#${e.actorId}` : '—')}</td>
                    <td>{e.ip ?? '—'}</td>
                    <td>{describe(e)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={filters.page} totalPages={events.data.totalPages} onPage={(page) => set({ page })} />
        </>
      )}
    </Page>
  );
}

/** The target and details of an event in a line; repeated rate-limit hits show their count. */
function describe(e: AuditEvent): string {
  const details = { ...e.details };
  const count = typeof details.count === 'number' && details.count > 1 ? ` ×${details.count}` : '';
  delete details.count;
  const rest = Object.entries(details)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  return [e.target, rest].filter(Boolean).join(' · ') + count;
}
