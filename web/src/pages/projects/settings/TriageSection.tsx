import type { ProjectSettings } from '../../../api/client';
import { SettingsSection, Values } from './SettingsSection';

/**
 * Failure triage: how alike a new failure's signature must be to a triaged one to inherit its triage and issue.
 * Shown as kept; the triage issue gives this section its editor.
 */
export function TriageSection({ settings }: { settings: ProjectSettings['triage'] }) {
  return (
    <SettingsSection
      id="triage"
      title="Failure triage"
      about="A new failure this similar to a triaged one is suggested the same triage and issue."
    >
      <Values
        label="Failure triage"
        items={[['Similarity', `${Math.round(settings.similarity * 100)} % (${settings.similarity})`]]}
      />
    </SettingsSection>
  );
}
