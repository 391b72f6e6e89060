import { type ProjectRole, type ProjectSettings, roleAtLeast } from '../../../api/client';
import { SettingsSection, Values } from './SettingsSection';

/**
 * What the project keeps: finished runs by age and by number (pinned runs and runs in progress always stay). Only
 * OWNERs may change it (the API refuses others); shown as kept, the retention issue gives the owners its editor.
 */
export function RetentionSection({
  settings,
  role,
}: {
  settings: ProjectSettings['retention'];
  role: ProjectRole;
}) {
  return (
    <SettingsSection
      id="retention"
      title="Retention"
      about="How long finished runs and their results are kept; pinned runs and runs in progress stay."
      note={roleAtLeast(role, 'OWNER') ? undefined : 'Only the project’s owners change its retention.'}
    >
      <Values
        label="Retention"
        items={[
          [
            'Keep runs for',
            settings.keepDays === null ? 'no limit by age' : `${settings.keepDays.toLocaleString()} days`,
          ],
          [
            'Keep at most',
            settings.keepRuns === null
              ? 'no limit by number'
              : `${settings.keepRuns.toLocaleString()} finished runs`,
          ],
        ]}
      />
    </SettingsSection>
  );
}
