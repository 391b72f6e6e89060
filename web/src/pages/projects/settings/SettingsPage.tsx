import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { roleAtLeast } from '../../../api/client';
import { useApi } from '../../../session-context';
import { ErrorMessage, Loading, Page } from '../../../ui/components';
import { NotificationsSection } from '../notifications/NotificationsSection';
import { ProjectNav } from '../ProjectNav';
import { FlakySection } from './FlakySection';
import { GateSection } from './GateSection';
import { RetentionSection } from './RetentionSection';
import { settingsKey } from './settings-form';
import { StreamsSection } from './StreamsSection';
import { TriageSection } from './TriageSection';

/**
 * A project's settings, a section a group (API.md, "Project settings"): the flaky tests policy and the streams,
 * and the quality gate, which MAINTAINERs change here, then triage as it stands, retention (OWNERs change it), and
 * notifications (the reader's own mail; webhooks for MAINTAINERs). VIEWERs and REPORTERs read every value and are
 * told who changes them.
 */
export function SettingsPage() {
  const api = useApi();
  const projectId = Number(useParams().projectId);
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const settings = useQuery({
    queryKey: settingsKey(projectId),
    queryFn: () => api.getSettings(projectId),
  });
  const role = project.data?.role;
  const canEdit = role !== undefined && roleAtLeast(role, 'MAINTAINER');
  const error = project.error ?? settings.error;
  return (
    <Page title={project.data ? `Settings of ${project.data.name}` : 'Settings'}>
      {/* No way round a project that cannot be opened. */}
      {project.error ? null : <ProjectNav projectId={projectId} role={role} />}
      {error ? (
        <ErrorMessage error={error} />
      ) : !settings.data || !role ? (
        <Loading what="Loading the settings" />
      ) : (
        <>
          {canEdit ? null : (
            <p className="notice" role="status">
              You are a {role.toLowerCase()} of this project: you can read its settings; maintainers and
              owners change them.
            </p>
          )}
          <div className="settings">
            <FlakySection projectId={projectId} settings={settings.data.flaky} canEdit={canEdit} />
            <StreamsSection projectId={projectId} settings={settings.data.streams} canEdit={canEdit} />
            <GateSection projectId={projectId} settings={settings.data.gate} canEdit={canEdit} />
            <TriageSection projectId={projectId} settings={settings.data.triage} canEdit={canEdit} />
            <RetentionSection projectId={projectId} settings={settings.data.retention} role={role} />
            <NotificationsSection projectId={projectId} role={role} />
          </div>
        </>
      )}
    </Page>
  );
}
