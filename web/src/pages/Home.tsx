import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useApi } from '../session-context';
import { ErrorMessage, Field, Loaded, noItems, Page, Pager } from '../ui/components';
import { useUrlState } from '../ui/url-state';
import { CountBar, PassRate } from '../ui/CountBar';
import { RunTime } from '../ui/relative-time';

/** The projects the user can see, and a new one. */
export function Home() {
  const api = useApi();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [state, set] = useUrlState(['page'] as const);
  const page = Number(state.page || 0);
  const projects = useQuery({
    queryKey: ['projects', 'page', page],
    queryFn: () => api.listProjects(page, 25),
    placeholderData: keepPreviousData,
  });
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => api.createProject(key.trim(), name.trim()),
    onSuccess: (project) => {
      void queries.invalidateQueries({ queryKey: ['projects'] });
      void navigate(`/projects/${project.id}`);
    },
  });
  return (
    <Page title="Projects">
      <Loaded
        query={projects}
        what="Loading projects"
        isEmpty={noItems}
        empty="No projects yet: you see the projects you are a member of, directly or through a group."
      >
        {(data) => (
          <>
            <div className="table-wrap">
              <table>
                <caption className="visually-hidden">Your projects</caption>
                <thead>
                  <tr>
                    <th scope="col">Project</th>
                    <th scope="col">Latest run</th>
                    <th scope="col" className="hide-phone">
                      Results
                    </th>
                    <th scope="col">Pass rate</th>
                    <th scope="col" className="hide-phone">
                      Your role
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.content.map((p) => (
                    <tr key={p.id} data-testid={`project-${p.id}`}>
                      <td className="c-name-cell">
                        <Link to={`/projects/${p.id}`} dir="auto">
                          {p.name}
                        </Link>
                        <span className="hint block">{p.key}</span>
                      </td>
                      <td className="c-name-cell">
                        {p.latestRun ? (
                          <>
                            <Link to={`/runs/${p.latestRun.id}`}>{p.latestRun.name}</Link>{' '}
                            {p.latestRun.stream ? (
                              <Link
                                to={`/projects/${p.id}?stream=${encodeURIComponent(p.latestRun.stream)}`}
                                className="stream-tag"
                                title={`The latest run of ${p.name}'s default stream; all its runs`}
                              >
                                <span className="visually-hidden">stream</span> {p.latestRun.stream}
                              </Link>
                            ) : null}
                            <span className="hint block">
                              <RunTime run={p.latestRun} />
                            </span>
                          </>
                        ) : (
                          <span className="hint">No finished run yet</span>
                        )}
                      </td>
                      <td className="hide-phone">
                        {p.latestRun ? <CountBar counts={p.latestRun.counts} /> : null}
                      </td>
                      <td>{p.latestRun ? <PassRate counts={p.latestRun.counts} /> : '—'}</td>
                      <td className="hide-phone">{p.role.toLowerCase()}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager page={page} totalPages={data.totalPages} onPage={(p) => set({ page: String(p) })} />
          </>
        )}
      </Loaded>
      <form
        className="card"
        aria-label="Create a project"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          create.mutate();
        }}
        noValidate
      >
        <h2>New project</h2>
        <div className="row">
          <Field
            label="Key"
            name="key"
            value={key}
            onChange={(e) => setKey(e.target.value.toUpperCase())}
            hint="2-32 of A-Z, 0-9 and _, e.g. SHOP"
            maxLength={32}
          />
          <Field
            label="Name"
            name="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={200}
          />
        </div>
        <ErrorMessage error={create.error} />
        <button type="submit" disabled={create.isPending || !key.trim() || !name.trim()}>
          Create project
        </button>
      </form>
    </Page>
  );
}
