import type { ProjectSettings } from '../../../api/client';
import { SettingsSection, Values } from './SettingsSection';

const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const counted = (value: boolean) => (value ? 'not counted' : 'counted');

/**
 * The quality gate's conditions as the project keeps them: whether it is on, the failures it allows, the pass rate
 * and number of tests it needs, and which failures it leaves out. Shown as they are; the gate's issue gives this
 * section its editor.
 */
export function GateSection({ settings }: { settings: ProjectSettings['gate'] }) {
  return (
    <SettingsSection
      id="gate"
      title="Quality gate"
      about="The conditions a finished run is held to: a run that fails one fails the gate."
    >
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
    </SettingsSection>
  );
}
