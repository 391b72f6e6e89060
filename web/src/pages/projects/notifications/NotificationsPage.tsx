import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { useApi } from '../../../session-context';
import { ErrorMessage, Loading, Page } from '../../../ui/components';
import { NotificationsSection } from './NotificationsSection';

/**
 * The project's settings page as far as notifications go (`/projects/:projectId/settings`, the address the mails'
 * unsubscribe line gives): it mounts the Notifications section, which the settings page of all groups takes over.
 */
export function NotificationsPage() {
  const api = useApi();
  const projectId = Number(useParams().projectId);
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  return (
    <Page title={project.data ? `Settings of ${project.data.name}` : 'Settings'}>
      <nav className="links" aria-label="Project">
        <Link to={`/projects/${projectId}`}>← All runs of the project</Link>
      </nav>
      {project.error ? (
        <ErrorMessage error={project.error} />
      ) : !project.data ? (
        <Loading what="Loading the project" />
      ) : (
        <div className="settings">
          <NotificationsSection projectId={projectId} role={project.data.role} />
        </div>
      )}
    </Page>
  );
}
