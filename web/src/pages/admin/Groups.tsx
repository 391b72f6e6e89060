import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import type { Group, ProjectRole } from '../../api/client';
import { useApi } from '../../session-context';
import { Empty, ErrorMessage, Field, Loading, Page, Loaded, noItems } from '../../ui/components';
import { AdminNav } from './AdminNav';

const ROLES: ProjectRole[] = ['VIEWER', 'REPORTER', 'MAINTAINER', 'OWNER'];

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
  const [userId, setUserId] = useState('');
  const changed = () => {
    void queries.invalidateQueries({ queryKey: ['group', id] });
    void queries.invalidateQueries({ queryKey: ['group-members', id] });
    void queries.invalidateQueries({ queryKey: ['groups'] });
  };
  const save = useMutation({
    mutationFn: (bindings: Group['bindings']) => api.setBindings(id, bindings),
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
    mutationFn: (user: number) => api.addGroupMember(id, user),
    onSuccess: () => (setUserId(''), changed()),
  });
  const dropped = useMutation({
    mutationFn: (user: number) => api.removeGroupMember(id, user),
    onSuccess: changed,
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
      <ErrorMessage error={save.error ?? renamed.error ?? removed.error ?? added.error ?? dropped.error} />
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
            <button type="submit" disabled={!rename.trim()}>
              Save name
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
      {bindings.length === 0 ? <Empty>Bound to no project.</Empty> : null}
      <ul>
        {bindings.map((b) => (
          <li key={b.projectId}>
            {projectName(b.projectId)}: {b.role}{' '}
            <button
              type="button"
              className="link"
              onClick={() => save.mutate(bindings.filter((x) => x.projectId !== b.projectId))}
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
          save.mutate([...bindings.filter((b) => b.projectId !== pid), { projectId: pid, role }]);
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
      {members.isPending ? (
        <Loading />
      ) : members.error ? (
        <ErrorMessage error={members.error} />
      ) : members.data.content.length === 0 ? (
        <Empty>No members.</Empty>
      ) : (
        <ul>
          {members.data.content.map((m) => (
            <li key={`${m.userId}-${m.source}`}>
              {m.fullName} ({m.email}) · {m.source === 'DIRECTORY' ? 'from the directory' : 'added here'}{' '}
              {m.source === 'MANUAL' ? (
                <button type="button" className="link" onClick={() => dropped.mutate(m.userId)}>
                  Remove<span className="visually-hidden"> {m.email}</span>
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <form
        className="row"
        aria-label="Add a member"
        onSubmit={(e) => {
          e.preventDefault();
          added.mutate(Number(userId));
        }}
      >
        <Field
          label="User id"
          inputMode="numeric"
          value={userId}
          onChange={(e) => setUserId(e.target.value.replace(/\D/g, ''))}
          hint="The id shown in Admin → Users"
        />
        <button type="submit" disabled={!userId || added.isPending}>
          Add member
        </button>
      </form>
    </div>
  );
}
