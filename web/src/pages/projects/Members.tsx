import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'react-router';
import type { Member, ProjectRole } from '../../api/client';
import { useApi, useMe } from '../../session-context';
import { ErrorMessage, Field, Loaded, noItems, Notice, Page, Pager } from '../../ui/components';
import { useUrlState } from '../../ui/url-state';

const ROLES: ProjectRole[] = ['VIEWER', 'REPORTER', 'MAINTAINER', 'OWNER'];
const RANK: Record<ProjectRole, number> = { VIEWER: 0, REPORTER: 1, MAINTAINER: 2, OWNER: 3 };

/**
 * A project's members with their role and where it comes from (direct, or a group). OWNERs change direct roles and
 * remove direct members; MAINTAINERs and OWNERs invite by email with a role. The API keeps a project's last OWNER.
 */
export function Members() {
  const api = useApi();
  const queries = useQueryClient();
  const projectId = Number(useParams().projectId);
  const [state, set] = useUrlState(['page'] as const);
  const page = Number(state.page || 0);
  const { me } = useMe();
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const members = useQuery({
    queryKey: ['members', projectId, page],
    queryFn: () => api.listMembers(projectId, page),
    placeholderData: keepPreviousData,
  });
  const role = project.data?.role;
  const owner = role === 'OWNER';
  const [changed, setChanged] = useState<string>();
  const update = useMutation({
    mutationFn: ({ member, role }: { member: Member; role: ProjectRole }) =>
      api.setMember(projectId, member.userId, role),
    onSuccess: (_, { member, role }) => {
      setChanged(`${member.fullName || member.email} is now ${role.toLowerCase()}.`);
      void queries.invalidateQueries({ queryKey: ['members', projectId] });
    },
  });
  const remove = useMutation({
    mutationFn: (member: Member) => api.removeMember(projectId, member.userId),
    onSuccess: (_, member) => {
      setChanged(`${member.fullName || member.email} was removed.`);
      void queries.invalidateQueries({ queryKey: ['members', projectId] });
    },
  });
  return (
    <Page title={project.data ? `Members of ${project.data.name}` : 'Members'}>
      <nav className="links" aria-label="Project">
        <Link to={`/projects/${projectId}`}>← All runs of the project</Link>
      </nav>
      {changed ? <Notice>{changed}</Notice> : null}
      <ErrorMessage error={update.error ?? remove.error} />
      <Loaded query={members} what="Loading members" isEmpty={noItems} empty="No members.">
        {(data) => (
          <>
            <div className="table-wrap">
              <table>
                <caption className="visually-hidden">Members and their roles</caption>
                <thead>
                  <tr>
                    <th scope="col">Member</th>
                    <th scope="col">Role</th>
                    <th scope="col">Through</th>
                    {owner ? (
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    ) : null}
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((m) => (
                    <tr key={`${m.userId}-${m.via}`}>
                      <td>
                        {m.fullName}
                        {m.userId === me?.id ? ' (you)' : ''}
                        <span className="hint block">{m.email}</span>
                      </td>
                      <td>
                        {owner && m.via === 'DIRECT' ? (
                          <select
                            aria-label={`Role of ${m.email}`}
                            value={m.role}
                            disabled={update.isPending}
                            onChange={(e) =>
                              update.mutate({ member: m, role: e.target.value as ProjectRole })
                            }
                          >
                            {ROLES.map((r) => (
                              <option key={r} value={r}>
                                {r.toLowerCase()}
                              </option>
                            ))}
                          </select>
                        ) : (
                          m.role.toLowerCase()
                        )}
                      </td>
                      <td>{m.via === 'DIRECT' ? 'direct' : 'a group'}</td>
                      {owner ? (
                        <td>
                          {m.via === 'DIRECT' ? (
                            <button
                              type="button"
                              className="danger"
                              disabled={remove.isPending}
                              onClick={() => {
                                if (window.confirm(`Remove ${m.email} from the project?`)) {
                                  remove.mutate(m);
                                }
                              }}
                            >
                              Remove<span className="visually-hidden"> {m.email}</span>
                            </button>
                          ) : null}
                        </td>
                      ) : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={page} totalPages={data.totalPages} onPage={(p) => set({ page: String(p) })} />
          </>
        )}
      </Loaded>
      {role && RANK[role] >= RANK.MAINTAINER ? <Invite projectId={projectId} role={role} /> : null}
    </Page>
  );
}

/** Invite by email with a role (at most the inviter's own): a mail with a link, that joins or creates the account. */
function Invite({ projectId, role }: { projectId: number; role: ProjectRole }) {
  const api = useApi();
  const [email, setEmail] = useState('');
  const [invitedRole, setInvitedRole] = useState<ProjectRole>('VIEWER');
  const [sent, setSent] = useState<string>();
  const invite = useMutation({
    mutationFn: () => api.invite(projectId, email.trim(), invitedRole),
    onSuccess: () => {
      setSent(`Invitation sent to ${email.trim()} as ${invitedRole.toLowerCase()}.`);
      setEmail('');
    },
  });
  return (
    <form
      className="card"
      aria-label="Invite"
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        setSent(undefined);
        invite.mutate();
      }}
    >
      <h2>Invite someone</h2>
      <div className="row">
        <Field
          label="Email"
          name="email"
          type="email"
          autoComplete="off"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <div className="field">
          <label htmlFor="invite-role">Role</label>
          <select
            id="invite-role"
            value={invitedRole}
            onChange={(e) => setInvitedRole(e.target.value as ProjectRole)}
          >
            {ROLES.filter((r) => RANK[r] <= RANK[role]).map((r) => (
              <option key={r} value={r}>
                {r.toLowerCase()}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorMessage error={invite.error} />
      {sent ? <Notice>{sent}</Notice> : null}
      <button type="submit" disabled={invite.isPending || !email.trim()}>
        Send invitation
      </button>
    </form>
  );
}
