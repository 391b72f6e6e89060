import type { ProjectRole, ProjectSettings } from '../../../api/client';
import { RetentionEditor } from '../retention/RetentionEditor';
import { SettingsSection } from './SettingsSection';

/**
 * What the project keeps: finished runs by age and by number (pinned runs and runs in progress always stay), with
 * what the policy removes now. OWNERs change it (the API refuses others), the others read it: RetentionEditor (#40).
 */
export function RetentionSection({
  projectId,
  settings,
  role,
}: {
  projectId: number;
  settings: ProjectSettings['retention'];
  role: ProjectRole;
}) {
  return (
    <SettingsSection
      id="retention"
      title="Retention"
      about="How long finished runs and their results are kept; pinned runs and runs in progress stay."
    >
      <RetentionEditor projectId={projectId} settings={settings} role={role} />
    </SettingsSection>
  );
}
