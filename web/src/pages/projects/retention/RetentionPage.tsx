import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { useApi } from '../../../session-context';
import { Loaded, Page } from '../../../ui/components';
import { settingsKey } from '../settings/settings-form';
import { RetentionEditor } from './RetentionEditor';

/**
 * The project's retention settings on a page of their own (/projects/{id}/retention), until the project's Settings
 * page (a section per settings group) hosts RetentionEditor in its retention section.
 */
export function RetentionPage() {
  const api = useApi();
  const projectId = Number(useParams().projectId);
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const settings = useQuery({ queryKey: settingsKey(projectId), queryFn: () => api.getSettings(projectId) });
  return (
    <Page title={project.data ? `${project.data.name} · Retention` : 'Retention'}>
      <nav className="links" aria-label="Project">
        <Link to={`/projects/${projectId}`}>← All runs of the project</Link>
      </nav>
      <section className="card settings-section" aria-labelledby="retention-title" id="retention">
        <h2 id="retention-title">Retention</h2>
        <p className="hint settings-about">
          How long finished runs and their results are kept; pinned runs and runs in progress stay.
        </p>
        <Loaded query={settings} what="Loading the settings">
          {(data) =>
            project.data ? (
              <RetentionEditor projectId={projectId} settings={data.retention} role={project.data.role} />
            ) : null
          }
        </Loaded>
      </section>
    </Page>
  );
}
