import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type AdminUser, type Group, type GroupMember, type ProjectRole, ROLES } from '../../api/client';
import { useApi } from '../../session-context';
import { Empty, ErrorMessage, Field, Loading, Page, Loaded, noItems } from '../../ui/components';
import { outcomeOf, OutcomeLine, said } from '../../ui/outcome';
import { SearchField } from '../../ui/SearchField';
import { AdminNav } from './AdminNav';

export function AdminGroups() {
  const api = useApi();
  const queries = useQueryClient();
  const groups = useQuery({ queryKey: ['groups'], queryFn: () => api.listGroups() });
  const [name, setName] = useState('');
  const [open, setOpen] = useState<number | undefined>();
  const create = useMutation({
    mutationFn: () => api.createGroup(name.trim()),
    onSuccess: (group) => {
      setName('');
      setOpen(group.id);
      void queries.invalidateQueries({ queryKey: ['groups'] });
    },
  });
  return (
    <Page title="Groups">
      <AdminNav />
      <p>
        Groups give their members roles on projects. Directory (LDAP) groups map onto groups of exactly the
        same name (case-sensitive) at each directory sign-in.
      </p>
      <form
        className="card"
        aria-label="Create a group"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          create.mutate();
        }}
        noValidate
      >
        <Field
          label="New group name"
          name="name"
          value={name}
          maxLength={200}
          onChange={(e) => setName(e.target.value)}
        />
        <ErrorMessage error={create.error} />
        <button type="submit" disabled={create.isPending || !name.trim()}>
          Create group
        </button>
      </form>
      <Loaded query={groups} what="Loading groups" isEmpty={noItems} empty={<>No groups yet.</>}>
        {(data) => (
          <ul className="groups">
            {data.content.map((g) => (
              <li key={g.id} className="card">
                <button
                  type="button"
                  className="group-toggle"
                  aria-expanded={open === g.id}
                  onClick={() => setOpen(open === g.id ? undefined : g.id)}
                >
                  {g.name}
                </button>
                {open === g.id ? <GroupDetail id={g.id} onGone={() => setOpen(undefined)} /> : null}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </Page>
  );
}

function GroupDetail({ id, onGone }: { id: number; onGone: () => void }) {
  const api = useApi();
  const queries = useQueryClient();
  const group = useQuery({ queryKey: ['group', id], queryFn: () => api.getGroup(id) });
  const members = useQuery({ queryKey: ['group-members', id], queryFn: () => api.listGroupMembers(id) });
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api.listProjects() });
  const [rename, setRename] = useState<string | undefined>();
  const [projectId, setProjectId] = useState('');
  const [role, setRole] = useState<ProjectRole>('VIEWER');
  const changed = () => {
    void queries.invalidateQueries({ queryKey: ['group', id] });
    void queries.invalidateQueries({ queryKey: ['group-members', id] });
    void queries.invalidateQueries({ queryKey: ['groups'] });
  };
  const save = useMutation({
    mutationFn: ({ bindings }: { bindings: Group['bindings']; done: string }) =>
      api.setBindings(id, bindings),
    onSuccess: changed,
  });
  const renamed = useMutation({
    mutationFn: (name: string) => api.renameGroup(id, name),
    onSuccess: () => (setRename(undefined), changed()),
  });
  const removed = useMutation({
    mutationFn: () => api.deleteGroup(id),
    onSuccess: () => (onGone(), changed()),
  });
  const added = useMutation({
    mutationFn: (user: AdminUser) => api.addGroupMember(id, user.id),
    onSuccess: changed,
  });
  const dropped = useMutation({
    mutationFn: (member: GroupMember) => api.removeGroupMember(id, member.userId),
    onSuccess: changed,
  });
  const outcome = outcomeOf({
    save: said(save, (_, { done }) => done),
    renamed: said(renamed, (g) => `Renamed to ${g.name}.`),
    removed: said(removed),
    added: said(added, (_, user) => `${user.fullName} (${user.email}) was added.`),
    dropped: said(dropped, (_, member) => `${member.fullName} (${member.email}) was removed.`),
  });
  if (group.isPending) {
    return <Loading />;
  }
  if (group.error) {
    return <ErrorMessage error={group.error} />;
  }
  const bindings = group.data.bindings;
  const projectName = (pid: number) =>
    projects.data?.content.find((p) => p.id === pid)?.name ?? `project #${pid}`;
  return (
    <div className="group-detail">
      <OutcomeLine of={outcome} only={['renamed', 'removed']} />
      <div className="row">
        {rename === undefined ? (
          <button type="button" onClick={() => setRename(group.data.name)}>
            Rename
          </button>
        ) : (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              renamed.mutate(rename.trim());
            }}
          >
            <Field label="Name" value={rename} onChange={(e) => setRename(e.target.value)} />
            <button type="submit" disabled={!rename.trim() || renamed.isPending}>
              Save name
            </button>
            <button type="button" onClick={() => setRename(undefined)}>
              Cancel
            </button>
          </form>
        )}
        <button
          type="button"
          className="danger"
          onClick={() =>
            window.confirm(`Delete the group "${group.data.name}"? Its members lose the roles it gave.`) &&
            removed.mutate()
          }
        >
          Delete group
        </button>
      </div>
      <h3>Projects</h3>
      <OutcomeLine of={outcome} only={['save']} />
      {bindings.length === 0 ? <Empty>Bound to no project.</Empty> : null}
      <ul>
        {bindings.map((b) => (
          <li key={b.projectId}>
            {projectName(b.projectId)}: {b.role}{' '}
            <button
              type="button"
              className="link"
              onClick={() =>
                save.mutate({
                  bindings: bindings.filter((x) => x.projectId !== b.projectId),
                  done: `${projectName(b.projectId)} was unbound.`,
                })
              }
            >
              Remove<span className="visually-hidden"> {projectName(b.projectId)}</span>
            </button>
          </li>
        ))}
      </ul>
      <form
        className="row"
        aria-label="Bind a project"
        onSubmit={(e) => {
          e.preventDefault();
          const pid = Number(projectId);
          save.mutate({
            bindings: [...bindings.filter((b) => b.projectId !== pid), { projectId: pid, role }],
            done: `${projectName(pid)} is bound as ${role.toLowerCase()}.`,
          });
        }}
      >
        <div className="field">
          <label htmlFor={`bind-project-${id}`}>Project</label>
          <select id={`bind-project-${id}`} value={projectId} onChange={(e) => setProjectId(e.target.value)}>
            <option value="">Choose a project</option>
            {projects.data?.content.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`bind-role-${id}`}>Role</label>
          <select
            id={`bind-role-${id}`}
            value={role}
            onChange={(e) => setRole(e.target.value as ProjectRole)}
          >
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={!projectId || save.isPending}>
          Bind project
        </button>
      </form>
      <h3>Members</h3>
      <OutcomeLine of={outcome} only={['added', 'dropped']} />
      {members.isPending ? (
        <Loading what="Loading members" />
      ) : members.error ? (
        <ErrorMessage error={members.error} />
      ) : members.data.content.length === 0 ? (
        <Empty>No members yet: find people below to add them.</Empty>
      ) : (
        <ul className="people" aria-label={`Members of ${group.data.name}`}>
          {members.data.content.map((m) => (
            <li key={`${m.userId}-${m.source}`}>
              <span className="person">
                <span>{m.fullName}</span>
                <span className="hint">{m.email}</span>
              </span>
              <span className="hint">{m.source === 'DIRECTORY' ? 'from the directory' : 'added here'}</span>
              {m.source === 'MANUAL' ? (
                <button
                  type="button"
                  className="link"
                  disabled={dropped.isPending}
                  onClick={() => dropped.mutate(m)}
                >
                  Remove<span className="visually-hidden"> {m.fullName}</span>
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <AddMember
        groupId={id}
        groupName={group.data.name}
        members={members.data?.content ?? []}
        adding={added.isPending}
        onAdd={(user, done) => added.mutate(user, { onSuccess: done })}
      />
    </div>
  );
}

/**
 * Find people by name or email (the users search, GET /api/admin/users?q=) and add them: a search box and its
 * matches, each with its own Add button, so the keyboard reaches every one with Tab.
 */
function AddMember({
  groupId,
  groupName,
  members,
  adding,
  onAdd,
}: {
  groupId: number;
  groupName: string;
  members: GroupMember[];
  adding: boolean;
  /** Adds `user`; `done` once they are a member. */
  onAdd: (user: AdminUser, done: () => void) => void;
}) {
  const api = useApi();
  const [q, setQ] = useState('');
  const users = useQuery({
    queryKey: ['admin-users', q, 0],
    queryFn: () => api.listUsers(q, 0),
    enabled: q !== '',
    placeholderData: keepPreviousData,
  });
  // A member by either source is one already: adding them by hand changes nothing they can see.
  const isMember = (user: AdminUser) => members.some((m) => m.userId === user.id);
  const searchId = `member-search-${groupId}`;
  return (
    <section className="add-member" aria-labelledby={`add-member-${groupId}`}>
      <h4 id={`add-member-${groupId}`}>Add people to {groupName}</h4>
      <SearchField id={searchId} label="Find by name or email" value={q} onSearch={setQ} />
      {q === '' ? (
        <p className="hint">Type part of a name or an email address.</p>
      ) : users.isPending ? (
        <Loading what="Searching" />
      ) : users.error ? (
        <ErrorMessage error={users.error} />
      ) : users.data.content.length === 0 ? (
        <Empty>No user matches “{q}”.</Empty>
      ) : (
        <>
          <ul className="people" aria-label={`People matching “${q}”`}>
            {users.data.content.map((u) => (
              <li key={u.id}>
                <span className="person">
                  <span>{u.fullName}</span>
                  <span className="hint">{u.email}</span>
                </span>
                {isMember(u) ? (
                  <span className="hint">a member</span>
                ) : (
                  <button
                    type="button"
                    disabled={adding}
                    // The button goes once they are a member: the keyboard's place goes back to the search.
                    onClick={() => onAdd(u, () => document.getElementById(searchId)?.focus())}
                  >
                    Add<span className="visually-hidden"> {u.fullName}</span>
                  </button>
                )}
              </li>
            ))}
          </ul>
          {users.data.totalElements > users.data.content.length ? (
            <p className="hint">
              The first {users.data.content.length} of {users.data.totalElements.toLocaleString()} matches:
              type more to narrow them down.
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}
