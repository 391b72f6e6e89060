import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useApi, useMe } from '../../session-context';
import { ErrorMessage, formatDate, Loaded, noItems, Page, Pager } from '../../ui/components';
import { AdminNav } from './AdminNav';

export function AdminUsers() {
  const api = useApi();
  const { me } = useMe();
  const queries = useQueryClient();
  const [q, setQ] = useState('');
  const [page, setPage] = useState(0);
  const users = useQuery({
    queryKey: ['admin-users', q, page],
    queryFn: () => api.listUsers(q.trim(), page),
    placeholderData: keepPreviousData,
  });
  const update = useMutation({
    mutationFn: ({ id, changes }: { id: number; changes: { admin?: boolean; enabled?: boolean } }) =>
      api.updateUser(id, changes),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['admin-users'] }),
  });
  return (
    <Page title="Users">
      <AdminNav />
      <div className="field search">
        <label htmlFor="user-search">Search by name or email</label>
        <input
          id="user-search"
          type="search"
          value={q}
          onChange={(e) => (setQ(e.target.value), setPage(0))}
        />
      </div>
      <ErrorMessage error={update.error} />
      <Loaded query={users} what="Loading users" isEmpty={noItems} empty={<>No user matches.</>}>
        {(data) => (
          <>
            <div className="table-wrap">
              {/* On a phone, stacked: each user's sign-in, dates and switches in view, not off the screen's edge. */}
              <table className="stacked">
                <thead>
                  <tr>
                    <th scope="col">Id</th>
                    <th scope="col">Name</th>
                    <th scope="col">Email</th>
                    <th scope="col">Sign-in</th>
                    <th scope="col">Created</th>
                    <th scope="col">Admin</th>
                    <th scope="col">Enabled</th>
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((u) => (
                    <tr key={u.id}>
                      <td data-label="Id">{u.id}</td>
                      <td>{u.fullName}</td>
                      <td>{u.email}</td>
                      <td data-label="Sign-in">{u.authSource === 'LDAP' ? 'Directory' : 'Local'}</td>
                      <td data-label="Created">{formatDate(u.createdAt)}</td>
                      <td data-label="Admin">
                        <input
                          type="checkbox"
                          aria-label={`${u.fullName} is an administrator`}
                          checked={u.admin}
                          disabled={update.isPending || u.id === me?.id}
                          onChange={(e) => update.mutate({ id: u.id, changes: { admin: e.target.checked } })}
                        />
                      </td>
                      <td data-label="Enabled">
                        <input
                          type="checkbox"
                          aria-label={`${u.fullName} may sign in`}
                          checked={u.enabled}
                          disabled={update.isPending || u.id === me?.id}
                          onChange={(e) => {
                            if (
                              e.target.checked ||
                              window.confirm(`Disable ${u.email}? Their sessions and API keys stop working.`)
                            ) {
                              update.mutate({ id: u.id, changes: { enabled: e.target.checked } });
                            }
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={page} totalPages={data.totalPages} onPage={setPage} />
          </>
        )}
      </Loaded>
    </Page>
  );
}
