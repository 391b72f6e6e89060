import type { ProjectSettings } from '../../../api/client';
import { GateForm } from './GateForm';
import { SettingsSection, Values } from './SettingsSection';

const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const counted = (value: boolean) => (value ? 'not counted' : 'counted');

/**
 * The quality gate's conditions: whether it is on, the failures it allows, the pass rate and number of tests it
 * needs, and which failures it leaves out. MAINTAINERs change them (GateForm); the others read them.
 */
export function GateSection({
  projectId,
  settings,
  canEdit,
}: {
  projectId: number;
  settings: ProjectSettings['gate'];
  canEdit: boolean;
}) {
  return (
    <SettingsSection
      id="gate"
      title="Quality gate"
      about="The conditions a finished run is held to: a run that fails one fails the gate."
    >
      {canEdit ? (
        <GateForm projectId={projectId} settings={settings} />
      ) : (
        <Values
          label="Quality gate"
          items={[
            ['Gate', settings.enabled ? 'on' : 'off'],
            [
              'Most failed tests allowed',
              settings.maxFailed === null ? 'no limit' : settings.maxFailed.toLocaleString(),
            ],
            ['Least pass rate', settings.minPassRate === null ? 'none' : `${settings.minPassRate} %`],
            ['Least tests run', settings.minTotal === null ? 'none' : settings.minTotal.toLocaleString()],
            ['No new failures', yesNo(settings.noNewFailures)],
            ['Failures of quarantined tests', counted(settings.ignoreQuarantined)],
            ['Failures with a known issue', counted(settings.ignoreKnownIssues)],
          ]}
        />
      )}
    </SettingsSection>
  );
}
