import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import {
  type ProjectRole,
  type ProjectSettings,
  type RetentionPreview,
  roleAtLeast,
} from '../../../api/client';
import { useApi } from '../../../session-context';
import { ErrorMessage, Field, Notice } from '../../../ui/components';
import { problemsOf, useSettingsChange } from '../settings/settings-form';

type Retention = ProjectSettings['retention'];

/** The bounds the API holds both numbers to (API.md, "Retention"). */
export const RETENTION_MAX = 100_000;

/** A bound as typed: empty is no bound (null); a whole number 1..100,000; else undefined (not one). */
export function boundOf(text: string): number | null | undefined {
  const t = text.trim().replace(/[,\s_]/g, '');
  if (t === '') {
    return null;
  }
  if (!/^\d+$/.test(t)) {
    return undefined;
  }
  const n = Number(t);
  return n >= 1 && n <= RETENTION_MAX ? n : undefined;
}

/** "12 runs, 480,000 results would be removed", or that nothing would. */
export function previewText(preview: RetentionPreview): string {
  if (preview.runs === 0) {
    return 'Nothing would be removed now.';
  }
  const runs = `${preview.runs.toLocaleString('en-US')} ${preview.runs === 1 ? 'run' : 'runs'}`;
  const results = `${preview.results.toLocaleString('en-US')} ${preview.results === 1 ? 'result' : 'results'}`;
  return `${runs}, ${results} would be removed`;
}

/** `value`, once it has stayed the same for `ms`: a preview is asked for when the typing stops. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  const key = JSON.stringify(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
    // The key stands for the value: a new object of the same content is no change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, ms]);
  return settled;
}

/**
 * What the project keeps (API.md, "Retention"): finished runs by age and by number; pinned runs and runs in progress
 * always stay. Before a change is saved it says what the policy typed would remove now ("12 runs, 480,000 results
 * would be removed"); OWNERs change it and may run a pass at once, the others read it and what it removes now.
 *
 * A component of its own, for the retention section of the project's Settings page (one section a settings group).
 */
export function RetentionEditor({
  projectId,
  settings,
  role,
}: {
  projectId: number;
  settings: Retention;
  role: ProjectRole;
}) {
  // Here, not in the form: the form is remounted with what a save answered, and the saved notice stays.
  const save = useSettingsChange(projectId);
  const owner = roleAtLeast(role, 'OWNER');
  return owner ? (
    <>
      {/* Remounted with the saved values: the form starts again from what the API answered. */}
      <RetentionForm key={JSON.stringify(settings)} projectId={projectId} settings={settings} save={save} />
      {save.isSuccess ? <Notice>Retention saved.</Notice> : null}
    </>
  ) : (
    <>
      <dl className="settings-values" aria-label="Retention policy">
        <div>
          <dt>Keep runs for</dt>
          <dd>
            {settings.keepDays === null
              ? 'no limit by age'
              : `${settings.keepDays.toLocaleString('en-US')} days`}
          </dd>
        </div>
        <div>
          <dt>Keep at most</dt>
          <dd>
            {settings.keepRuns === null
              ? 'no limit by number'
              : `${settings.keepRuns.toLocaleString('en-US')} finished runs`}
          </dd>
        </div>
      </dl>
      <PreviewLine projectId={projectId} keep={settings} />
      <p className="settings-note">Only the project’s owners change its retention.</p>
    </>
  );
}

function PreviewLine({ projectId, keep }: { projectId: number; keep: Retention }) {
  const api = useApi();
  const settled = useSettled(keep, 300);
  const none = settled.keepDays === null && settled.keepRuns === null;
  const preview = useQuery({
    queryKey: ['retention-preview', projectId, settled.keepDays, settled.keepRuns],
    queryFn: () => api.retentionPreview(projectId, settled),
    enabled: !none,
    placeholderData: keepPreviousData,
  });
  let text: string;
  if (none) {
    text = 'No limit: every run is kept.';
  } else if (preview.error) {
    text = 'What it would remove could not be read.';
  } else if (!preview.data) {
    text = 'Counting what it would remove…';
  } else {
    text = previewText(preview.data);
  }
  return (
    <p className="retention-preview" role="status" aria-live="polite" data-removes={preview.data?.runs ?? 0}>
      {text}
    </p>
  );
}

type Save = ReturnType<typeof useSettingsChange>;

function RetentionForm({
  projectId,
  settings,
  save,
}: {
  projectId: number;
  settings: Retention;
  save: Save;
}) {
  const api = useApi();
  const queries = useQueryClient();
  const [keepDays, setKeepDays] = useState(settings.keepDays === null ? '' : String(settings.keepDays));
  const [keepRuns, setKeepRuns] = useState(settings.keepRuns === null ? '' : String(settings.keepRuns));
  const [tried, setTried] = useState(false);
  const runNow = useMutation({
    mutationFn: () => api.runRetention(projectId),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['retention-preview', projectId] });
      void queries.invalidateQueries({ queryKey: ['runs', projectId] });
    },
  });
  const days = boundOf(keepDays);
  const runs = boundOf(keepRuns);
  const hint = `Empty for no limit; else a whole number from 1 to ${RETENTION_MAX.toLocaleString('en-US')}.`;
  const mine = {
    keepDays:
      days === undefined
        ? `A whole number of days from 1 to ${RETENTION_MAX.toLocaleString('en-US')}, or empty.`
        : undefined,
    keepRuns:
      runs === undefined
        ? `A whole number of runs from 1 to ${RETENTION_MAX.toLocaleString('en-US')}, or empty.`
        : undefined,
  };
  const server: Partial<Record<keyof Retention, string>> = problemsOf(save.error, 'retention').byField;
  const next: Retention | undefined =
    days === undefined || runs === undefined ? undefined : { keepDays: days, keepRuns: runs };
  const unchanged =
    next !== undefined && next.keepDays === settings.keepDays && next.keepRuns === settings.keepRuns;
  const problem = (field: keyof Retention) =>
    (tried || keepOf(field) !== '' ? mine[field] : undefined) ?? server[field];
  const keepOf = (field: keyof Retention) => (field === 'keepDays' ? keepDays : keepRuns);
  const edit = (set: (v: string) => void) => (value: string) => {
    set(value);
    if (!save.isIdle && !save.isPending) {
      save.reset();
    }
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    if (next && !unchanged) {
      save.mutate({ retention: next });
    }
  };
  return (
    <form aria-label="Retention policy" noValidate onSubmit={onSubmit} className="retention-form">
      <div className="settings-fields">
        <Field
          label="Keep runs for (days)"
          inputMode="numeric"
          value={keepDays}
          placeholder="no limit"
          onChange={(e) => edit(setKeepDays)(e.target.value)}
          hint={hint}
          error={problem('keepDays')}
        />
        <Field
          label="Keep at most (finished runs)"
          inputMode="numeric"
          value={keepRuns}
          placeholder="no limit"
          onChange={(e) => edit(setKeepRuns)(e.target.value)}
          hint={hint}
          error={problem('keepRuns')}
        />
      </div>
      {next ? <PreviewLine projectId={projectId} keep={next} /> : null}
      <p className="hint">
        Pinned runs and runs in progress are always kept. Removed runs cannot be brought back.
      </p>
      <div className="actions">
        <button type="submit" disabled={save.isPending || unchanged}>
          {save.isPending ? 'Saving…' : 'Save retention'}
        </button>
        <button
          type="button"
          className="secondary"
          disabled={runNow.isPending || !unchanged}
          title={unchanged ? undefined : 'Save the policy first'}
          onClick={() => {
            // Deletes runs for good: asked first, as removing a member or a key is.
            if (
              window.confirm(
                'Remove now the runs this policy does not keep, with their results? Pinned runs and runs in progress stay. This cannot be undone.',
              )
            ) {
              runNow.mutate();
            }
          }}
        >
          {runNow.isPending ? 'Cleaning up…' : 'Clean up now'}
        </button>
      </div>
      {save.error && !Object.keys(server).length ? <ErrorMessage error={save.error} /> : null}
      {runNow.data ? (
        <Notice>
          Removed {runNow.data.runsDeleted.toLocaleString('en-US')}{' '}
          {runNow.data.runsDeleted === 1 ? 'run' : 'runs'} and{' '}
          {runNow.data.resultsDeleted.toLocaleString('en-US')}{' '}
          {runNow.data.resultsDeleted === 1 ? 'result' : 'results'}.
        </Notice>
      ) : null}
      {runNow.error ? <ErrorMessage error={runNow.error} /> : null}
    </form>
  );
}
