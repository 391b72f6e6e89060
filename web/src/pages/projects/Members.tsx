import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useParams } from 'react-router';
import { type Member, type ProjectRole, roleAtLeast, ROLES } from '../../api/client';
import { useApi, useMe } from '../../session-context';
import { Field, Loaded, noItems, Page, Pager } from '../../ui/components';
import { type Outcome, outcomeOf, OutcomeLine, said } from '../../ui/outcome';
import { useUrlState } from '../../ui/url-state';
import { ProjectNav } from './ProjectNav';

type Action = 'update' | 'remove' | 'invite';

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
  const update = useMutation({
    mutationFn: ({ member, role }: { member: Member; role: ProjectRole }) =>
      api.setMember(projectId, member.userId, role),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['members', projectId] }),
  });
  const remove = useMutation({
    mutationFn: (member: Member) => api.removeMember(projectId, member.userId),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['members', projectId] }),
  });
  const invite = useMutation({
    mutationFn: ({ email, role }: { email: string; role: ProjectRole }) => api.invite(projectId, email, role),
  });
  const outcome = outcomeOf<Action>({
    update: said(update, (_, { member, role }) => `${nameOf(member)} is now ${role.toLowerCase()}.`),
    remove: said(remove, (_, member) => `${nameOf(member)} was removed.`),
    invite: said(invite, (_, { email, role }) => `Invitation sent to ${email} as ${role.toLowerCase()}.`),
  });
  return (
    <Page title={project.data ? `Members of ${project.data.name}` : 'Members'}>
      <ProjectNav projectId={projectId} role={role} />
      <OutcomeLine of={outcome} only={['update', 'remove']} />
      <Loaded query={members} what="Loading members" isEmpty={noItems} empty="No members.">
        {(data) => (
          <>
            <div className="table-wrap">
              {/* On a phone, stacked: each member's role, how, and Remove in view, not off the screen's edge. */}
              <table className="stacked">
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
                      <td data-label="Role">
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
                      <td data-label="Through">{m.via === 'DIRECT' ? 'direct' : 'a group'}</td>
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
      {role && roleAtLeast(role, 'MAINTAINER') ? (
        <Invite
          role={role}
          outcome={outcome}
          onInvite={(email, role, sent) => invite.mutate({ email, role }, { onSuccess: sent })}
        />
      ) : null}
    </Page>
  );
}

const nameOf = (member: Member) => member.fullName || member.email;

/** Invite by email with a role (at most the inviter's own): a mail with a link, that joins or creates the account. */
function Invite({
  role,
  outcome,
  onInvite,
}: {
  role: ProjectRole;
  outcome: Outcome<Action>;
  /** Sends the invitation; `sent` once it has gone. */
  onInvite: (email: string, role: ProjectRole, sent: () => void) => void;
}) {
  const [email, setEmail] = useState('');
  const [invitedRole, setInvitedRole] = useState<ProjectRole>('VIEWER');
  const sending = outcome.latest === 'invite' && outcome.pending;
  return (
    <form
      className="card"
      aria-label="Invite"
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        // The address stays in the box until the invitation has gone: a refused one can be corrected.
        onInvite(email.trim(), invitedRole, () => setEmail(''));
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
            {ROLES.filter((r) => roleAtLeast(role, r)).map((r) => (
              <option key={r} value={r}>
                {r.toLowerCase()}
              </option>
            ))}
          </select>
        </div>
      </div>
      <OutcomeLine of={outcome} only={['invite']} />
      <button type="submit" disabled={sending || !email.trim()}>
        Send invitation
      </button>
    </form>
  );
}
