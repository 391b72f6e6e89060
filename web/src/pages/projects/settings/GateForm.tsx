import { type FormEvent, useState } from 'react';
import type { ProjectSettings } from '../../../api/client';
import { Field, Notice } from '../../../ui/components';
import { changedFields, problemsOf, useSettingsChange } from './settings-form';
import { SaveProblems } from './SaveProblems';

type Gate = ProjectSettings['gate'];

/** The largest count the API takes for maxFailed and minTotal. */
export const GATE_MAX_COUNT = 1_000_000_000;

/** A box of a number that may be left empty (the condition not checked): its value, or why it is not one. */
export function optionalNumber(
  text: string,
  { max, whole }: { max: number; whole: boolean },
): { value: number | null } | { problem: string } {
  const t = text.trim();
  if (t === '') {
    return { value: null };
  }
  const ok = whole ? /^\d+$/.test(t) : /^\d+(\.\d+)?$/.test(t);
  const n = Number(t);
  if (!ok || n > max) {
    return {
      problem: whole
        ? `A whole number from 0 to ${max.toLocaleString()}, or empty for no limit.`
        : `A number from 0 to ${max}, or empty for no limit.`,
    };
  }
  return { value: n };
}

/**
 * The quality gate's editor (settings group `gate`, MAINTAINER): whether it is on, the conditions a finished run is
 * held to (each may be left empty: not checked), and what it leaves out. Sends only what changed; the answer (the
 * whole settings) replaces the settings the page shows (query key ['settings', projectId]). The Settings page mounts
 * it in its gate section for those who may change it.
 */
export function GateForm({ projectId, settings }: { projectId: number; settings: Gate }) {
  const change = useSettingsChange(projectId);
  const text = (n: number | null) => (n === null ? '' : String(n));
  const [enabled, setEnabled] = useState(settings.enabled);
  const [maxFailed, setMaxFailed] = useState(text(settings.maxFailed));
  const [minPassRate, setMinPassRate] = useState(text(settings.minPassRate));
  const [minTotal, setMinTotal] = useState(text(settings.minTotal));
  const [noNewFailures, setNoNewFailures] = useState(settings.noNewFailures);
  const [ignoreQuarantined, setIgnoreQuarantined] = useState(settings.ignoreQuarantined);
  const [ignoreKnownIssues, setIgnoreKnownIssues] = useState(settings.ignoreKnownIssues);
  const [tried, setTried] = useState(false);
  /** A box changed: the last save's answer is about other values now. */
  const edit =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      if (!change.isIdle && !change.isPending) {
        change.reset();
      }
    };
  const parsed = {
    maxFailed: optionalNumber(maxFailed, { max: GATE_MAX_COUNT, whole: true }),
    minPassRate: optionalNumber(minPassRate, { max: 100, whole: false }),
    minTotal: optionalNumber(minTotal, { max: GATE_MAX_COUNT, whole: true }),
  };
  const mine = {
    maxFailed: 'problem' in parsed.maxFailed ? parsed.maxFailed.problem : undefined,
    minPassRate: 'problem' in parsed.minPassRate ? parsed.minPassRate.problem : undefined,
    minTotal: 'problem' in parsed.minTotal ? parsed.minTotal.problem : undefined,
  };
  const valueOf = (p: (typeof parsed)[keyof typeof parsed]) => ('value' in p ? p.value : null);
  const invalid = Object.values(mine).some(Boolean);
  const next: Gate = {
    enabled,
    maxFailed: valueOf(parsed.maxFailed),
    minPassRate: valueOf(parsed.minPassRate),
    minTotal: valueOf(parsed.minTotal),
    noNewFailures,
    ignoreQuarantined,
    ignoreKnownIssues,
  };
  const patch = changedFields(settings, next);
  const unchanged = !invalid && Object.keys(patch).length === 0;
  const server = problemsOf(change.error, 'gate');
  const problem = (field: keyof typeof mine) => (tried ? mine[field] : undefined) ?? server.byField[field];
  const check = (
    name: keyof Gate,
    checked: boolean,
    set: (value: boolean) => void,
    label: string,
    hint?: string,
  ) => (
    <div className="field check-field">
      <label>
        <input type="checkbox" name={name} checked={checked} onChange={(e) => edit(set)(e.target.checked)} />{' '}
        {label}
      </label>
      {server.byField[name] ? (
        <span className="field-error">{server.byField[name]}</span>
      ) : hint ? (
        <span className="hint">{hint}</span>
      ) : null}
    </div>
  );
  return (
    <form
      aria-label="Quality gate"
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        setTried(true);
        if (!invalid && !unchanged) {
          change.mutate({ gate: patch });
        }
      }}
    >
      {check(
        'enabled',
        enabled,
        setEnabled,
        'Hold finished runs to the gate',
        'Off: every run’s gate is “off”.',
      )}
      <fieldset className="gate-fields" disabled={!enabled}>
        <legend>Conditions (empty: not checked)</legend>
        <div className="row settings-fields">
          <Field
            label="Most failed tests"
            name="maxFailed"
            type="number"
            inputMode="numeric"
            min={0}
            value={maxFailed}
            onChange={(e) => edit(setMaxFailed)(e.target.value)}
            error={problem('maxFailed')}
            hint="Failed and broken tests allowed; 0: none."
          />
          <Field
            label="Least pass rate (%)"
            name="minPassRate"
            type="number"
            inputMode="decimal"
            min={0}
            max={100}
            step="any"
            value={minPassRate}
            onChange={(e) => edit(setMinPassRate)(e.target.value)}
            error={problem('minPassRate')}
            hint="0 to 100: passed of passed, failed and broken."
          />
          <Field
            label="Least tests run"
            name="minTotal"
            type="number"
            inputMode="numeric"
            min={0}
            value={minTotal}
            onChange={(e) => edit(setMinTotal)(e.target.value)}
            error={problem('minTotal')}
            hint="Tests that ran, skipped ones included."
          />
        </div>
        {check(
          'noNewFailures',
          noNewFailures,
          setNoNewFailures,
          'Fail a run with a new failure',
          'A failure first seen in the run, not yet triaged.',
        )}
        {check(
          'ignoreQuarantined',
          ignoreQuarantined,
          setIgnoreQuarantined,
          'Do not count results of quarantined tests',
        )}
        {check(
          'ignoreKnownIssues',
          ignoreKnownIssues,
          setIgnoreKnownIssues,
          'Do not count failures with a known issue',
          'A failure triaged, or linked to an issue.',
        )}
      </fieldset>
      <SaveProblems error={change.error} server={server} />
      {change.isSuccess ? (
        <Notice>
          The quality gate is saved: it holds runs that finish from now on, and the latest run of a stream
          when a triage or quarantine change has its gate evaluated again.
        </Notice>
      ) : null}
      <button type="submit" disabled={change.isPending || unchanged}>
        {change.isPending ? 'Saving…' : 'Save the gate'}
      </button>
    </form>
  );
}
