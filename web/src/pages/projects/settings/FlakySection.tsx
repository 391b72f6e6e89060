import { type FormEvent, useState } from 'react';
import type { ProjectSettings } from '../../../api/client';
import { Field, Notice } from '../../../ui/components';
import { formatFlakeRate } from '../../../ui/test-health';
import { SettingsSection, Values } from './SettingsSection';
import { changedFields, problemsOf, rangeProblem, useSettingsChange, wholeNumber } from './settings-form';
import { SaveProblems } from './SaveProblems';

type Flaky = ProjectSettings['flaky'];

/** The bounds the API holds the policy to (API.md, issue #36): the form says them before the API has to. */
export const FLAKY_BOUNDS = {
  window: [2, 500],
  releaseAfterPasses: [1, 100],
} as const;

/** A fraction as the percentage typed: 0.2 → "20", 0.125 → "12.5" (no binary noise such as 28.999999999999996). */
export const percentOf = (fraction: number) => String(Math.round(fraction * 10_000) / 100);

/** A percentage typed as the fraction the API keeps: "12.5" → 0.125; undefined when it is not a number. */
export function fractionOf(text: string): number | undefined {
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text)) {
    return undefined;
  }
  return Math.round(Number(text) * 100) / 10_000;
}

/**
 * The flaky tests policy: how many runs are looked at, how many a test needs before its flip rate counts, the flip
 * rate that makes it flaky, and whether a test that becomes flaky is quarantined by itself (and released after how
 * many passing runs). MAINTAINERs change it; the others read it.
 */
export function FlakySection({
  projectId,
  settings,
  canEdit,
}: {
  projectId: number;
  settings: Flaky;
  canEdit: boolean;
}) {
  // Here, not in the form: the form is remounted with what a save answered, and the saved notice stays.
  const change = useSettingsChange(projectId);
  return (
    <SettingsSection
      id="flaky"
      title="Flaky tests"
      about={
        <>
          A test is flaky when, over the last runs it ran in, it both passed and failed in one run or on one
          commit, or its outcome flips often. It is decided as its results arrive.
        </>
      }
    >
      {canEdit ? (
        // Remounted with the saved values: the form starts again from what the API answered.
        <FlakyForm key={JSON.stringify(settings)} settings={settings} change={change} />
      ) : (
        <Values
          label="Flaky tests policy"
          items={[
            ['Window', `the last ${settings.window} runs a test ran in`],
            ['Minimum runs', `${settings.minRuns} runs before the flip rate counts`],
            ['Flip rate threshold', `${formatFlakeRate(settings.flipRate)} (${settings.flipRate})`],
            ['Automatic quarantine', settings.autoQuarantine ? 'on' : 'off'],
            ['Release after', `${settings.releaseAfterPasses} passing runs in a row`],
          ]}
        />
      )}
    </SettingsSection>
  );
}

function FlakyForm({ settings, change }: { settings: Flaky; change: ReturnType<typeof useSettingsChange> }) {
  const [window, setWindow] = useState(String(settings.window));
  const [minRuns, setMinRuns] = useState(String(settings.minRuns));
  const [flipRate, setFlipRate] = useState(percentOf(settings.flipRate));
  const [autoQuarantine, setAutoQuarantine] = useState(settings.autoQuarantine);
  const [releaseAfterPasses, setReleaseAfterPasses] = useState(String(settings.releaseAfterPasses));
  const [tried, setTried] = useState(false);
  /** A box changed: the last save's answer (its notice or its refusal) is about other values now. */
  const edit =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      if (!change.isIdle && !change.isPending) {
        change.reset();
      }
    };
  const windowValue = wholeNumber(window);
  const mine: Record<keyof Flaky, string | undefined> = {
    window: rangeProblem(window, ...FLAKY_BOUNDS.window),
    // At most the window: its number when the window is one, else in words (not "from 2 to 2" for a window of 1).
    minRuns:
      windowValue !== undefined && rangeProblem(window, ...FLAKY_BOUNDS.window) === undefined
        ? rangeProblem(minRuns, 2, windowValue) && `A whole number from 2 to ${windowValue} (the window).`
        : rangeProblem(minRuns, 2, FLAKY_BOUNDS.window[1]) && 'A whole number from 2 to the window.',
    flipRate:
      fractionOf(flipRate) === undefined || fractionOf(flipRate)! > 1
        ? 'A percentage from 0 to 100.'
        : undefined,
    autoQuarantine: undefined,
    releaseAfterPasses: rangeProblem(releaseAfterPasses, ...FLAKY_BOUNDS.releaseAfterPasses),
  };
  const invalid = Object.values(mine).some(Boolean);
  const next: Flaky | undefined = invalid
    ? undefined
    : {
        window: wholeNumber(window)!,
        minRuns: wholeNumber(minRuns)!,
        flipRate: fractionOf(flipRate)!,
        autoQuarantine,
        releaseAfterPasses: wholeNumber(releaseAfterPasses)!,
      };
  const patch = next ? changedFields(settings, next) : {};
  const unchanged = next !== undefined && Object.keys(patch).length === 0;
  const server = problemsOf(change.error, 'flaky');
  // The client's own hint first (once the form was tried or the box holds something wrong), else the API's word.
  const problem = (field: keyof Flaky) => (tried ? mine[field] : undefined) ?? server.byField[field];
  return (
    <form
      aria-label="Flaky tests policy"
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        setTried(true);
        if (next && !unchanged) {
          change.mutate({ flaky: patch });
        }
      }}
    >
      <div className="row settings-fields">
        <Field
          label="Window (runs)"
          name="window"
          type="number"
          inputMode="numeric"
          min={FLAKY_BOUNDS.window[0]}
          max={FLAKY_BOUNDS.window[1]}
          value={window}
          onChange={(e) => edit(setWindow)(e.target.value)}
          error={problem('window')}
          hint={`${FLAKY_BOUNDS.window[0]} to ${FLAKY_BOUNDS.window[1]}: the last runs of the project a test ran in that are looked at.`}
        />
        <Field
          label="Minimum runs"
          name="minRuns"
          type="number"
          inputMode="numeric"
          min={2}
          max={windowValue}
          value={minRuns}
          onChange={(e) => edit(setMinRuns)(e.target.value)}
          error={problem('minRuns')}
          hint="2 to the window: the runs a test needs in the window before its flip rate counts."
        />
        <Field
          label="Flip rate threshold (%)"
          name="flipRate"
          type="number"
          inputMode="decimal"
          min={0}
          max={100}
          step="any"
          value={flipRate}
          onChange={(e) => edit(setFlipRate)(e.target.value)}
          error={problem('flipRate')}
          hint={
            <>
              0 to 100 %: flaky from this share of flips (passed ↔ failed) between consecutive runs. Kept as a
              fraction
              {fractionOf(flipRate) !== undefined && fractionOf(flipRate)! <= 1 ? (
                <>
                  : <code>{fractionOf(flipRate)}</code>
                </>
              ) : null}
              .
            </>
          }
        />
      </div>
      <div className="field check-field">
        <label>
          <input
            type="checkbox"
            name="autoQuarantine"
            checked={autoQuarantine}
            onChange={(e) => edit(setAutoQuarantine)(e.target.checked)}
          />{' '}
          Quarantine a test automatically when it becomes flaky
        </label>
        {server.byField.autoQuarantine ? (
          <span className="field-error">{server.byField.autoQuarantine}</span>
        ) : null}
      </div>
      <div className="row settings-fields">
        <Field
          label="Release after passing runs"
          name="releaseAfterPasses"
          type="number"
          inputMode="numeric"
          min={FLAKY_BOUNDS.releaseAfterPasses[0]}
          max={FLAKY_BOUNDS.releaseAfterPasses[1]}
          value={releaseAfterPasses}
          onChange={(e) => edit(setReleaseAfterPasses)(e.target.value)}
          error={problem('releaseAfterPasses')}
          hint={`${FLAKY_BOUNDS.releaseAfterPasses[0]} to ${FLAKY_BOUNDS.releaseAfterPasses[1]}: an automatic quarantine ends after this many passing runs in a row.`}
        />
      </div>
      <SaveProblems error={change.error} server={server} />
      {change.isSuccess ? <Notice>The flaky tests policy is saved.</Notice> : null}
      <button type="submit" disabled={change.isPending || unchanged}>
        {change.isPending ? 'Saving…' : 'Save the policy'}
      </button>
    </form>
  );
}
