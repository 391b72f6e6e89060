import { type FormEvent, useState } from 'react';
import type { ProjectSettings } from '../../../api/client';
import { Field, Notice } from '../../../ui/components';
import { fractionOf, percentOf } from './FlakySection';
import { SettingsSection, Values } from './SettingsSection';
import { problemsOf, useSettingsChange } from './settings-form';
import { SaveProblems } from './SaveProblems';

type Triage = ProjectSettings['triage'];

/**
 * Failure triage: how alike a new failure's signature must be to a triaged one to inherit its triage and issue as a
 * suggestion. MAINTAINERs change it; the others read it.
 */
export function TriageSection({
  projectId,
  settings,
  canEdit,
}: {
  projectId: number;
  settings: Triage;
  canEdit: boolean;
}) {
  // Here, not in the form: the form is remounted with what a save answered, and the saved notice stays.
  const change = useSettingsChange(projectId);
  return (
    <SettingsSection
      id="triage"
      title="Failure triage"
      about="A new failure this similar to a triaged one is suggested the same triage and issue."
    >
      {canEdit ? (
        <TriageForm key={JSON.stringify(settings)} settings={settings} change={change} />
      ) : (
        <Values
          label="Failure triage"
          items={[['Similarity', `${percentOf(settings.similarity)} % (${settings.similarity})`]]}
        />
      )}
    </SettingsSection>
  );
}

function TriageForm({
  settings,
  change,
}: {
  settings: Triage;
  change: ReturnType<typeof useSettingsChange>;
}) {
  const [similarity, setSimilarity] = useState(percentOf(settings.similarity));
  const [tried, setTried] = useState(false);
  const value = fractionOf(similarity);
  const mine = value === undefined || value > 1 ? 'A percentage from 0 to 100.' : undefined;
  const unchanged = value === settings.similarity;
  const server = problemsOf(change.error, 'triage');
  const problem = (tried ? mine : undefined) ?? server.byField.similarity;
  return (
    <form
      aria-label="Failure triage"
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        setTried(true);
        if (!mine && !unchanged) {
          change.mutate({ triage: { similarity: value! } });
        }
      }}
    >
      <div className="row settings-fields">
        <Field
          label="Similarity (%)"
          name="similarity"
          type="number"
          inputMode="decimal"
          min={0}
          max={100}
          step="any"
          value={similarity}
          onChange={(e) => {
            setSimilarity(e.target.value);
            if (!change.isIdle && !change.isPending) {
              change.reset();
            }
          }}
          error={problem}
          hint="0 to 100 %: how alike two failures' messages must be (trigram similarity) for the new one to be suggested the triaged one's triage and issue. 100 % suggests only for the same message."
        />
      </div>
      <SaveProblems error={change.error} server={server} />
      {change.isSuccess ? <Notice>The triage similarity is saved.</Notice> : null}
      <button type="submit" disabled={change.isPending || unchanged}>
        {change.isPending ? 'Saving…' : 'Save the similarity'}
      </button>
    </form>
  );
}
