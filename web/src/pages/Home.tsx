import { useQuery } from '@tanstack/react-query';
import { useApi } from '../session-context';
import { Loaded, noItems, Page } from '../ui/components';

/** The projects the user can see (part 2 of the UI opens them). */
export function Home() {
  const api = useApi();
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api.listProjects() });
  return (
    <Page title="Projects">
      <Loaded
        query={projects}
        what="Loading projects"
        isEmpty={noItems}
        empty="No projects yet: you see the projects you are a member of, directly or through a group."
      >
        {(data) => (
          <table>
            <caption className="visually-hidden">Your projects</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Your role</th>
              </tr>
            </thead>
            <tbody>
              {data.content.map((p) => (
                <tr key={p.id}>
                  <td>{p.key}</td>
                  <td>{p.name}</td>
                  <td>{p.role}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </Page>
  );
}
