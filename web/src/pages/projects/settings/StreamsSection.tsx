import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import type { ProjectSettings } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, ErrorMessage, Field, Notice } from '../../../ui/components';
import { SettingsSection, Values } from './SettingsSection';
import { changedFields, problemsOf, useSettingsChange } from './settings-form';
import { SaveProblems } from './SaveProblems';

type Streams = ProjectSettings['streams'];

/** At most this many attribute names make a stream (the API's bound). */
export const MAX_STREAM_ATTRIBUTES = 10;

/** "branch, env" → ["branch", "env"]: names as typed, blanks left out. */
export const attributeList = (text: string) =>
  text
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);

/**
 * Which runs are comparable: the attributes that, after the run's name, make its stream, and the stream the project
 * shows by default (its trend, its latest run in the projects list). MAINTAINERs change them; the others read them.
 */
export function StreamsSection({
  projectId,
  settings,
  canEdit,
}: {
  projectId: number;
  settings: Streams;
  canEdit: boolean;
}) {
  const change = useSettingsChange(projectId);
  return (
    <SettingsSection
      id="streams"
      title="Streams"
      about={
        <>
          A run&apos;s stream is its name without the build number, then the values of these attributes: runs
          of one stream are compared with each other. A change applies to runs created after it.
        </>
      }
    >
      {canEdit ? (
        <StreamsForm
          key={JSON.stringify(settings)}
          projectId={projectId}
          settings={settings}
          change={change}
        />
      ) : (
        <Values
          label="Streams"
          items={[
            [
              'Attributes',
              settings.attributes.length ? settings.attributes.join(', ') : 'none (the name only)',
            ],
            ['Default stream', settings.default ?? 'the stream with the most runs in the last 30 days'],
          ]}
        />
      )}
    </SettingsSection>
  );
}

function StreamsForm({
  projectId,
  settings,
  change,
}: {
  projectId: number;
  settings: Streams;
  change: ReturnType<typeof useSettingsChange>;
}) {
  const api = useApi();
  const streams = useQuery({ queryKey: ['streams', projectId], queryFn: () => api.listStreams(projectId) });
  const [attributes, setAttributes] = useState(settings.attributes.join(', '));
  const [fallback, setFallback] = useState(settings.default ?? '');
  const [tried, setTried] = useState(false);
  const names = attributeList(attributes);
  const mine =
    names.length > MAX_STREAM_ATTRIBUTES
      ? `At most ${MAX_STREAM_ATTRIBUTES} attributes.`
      : new Set(names).size !== names.length
        ? 'Each attribute once.'
        : names.some((n) => n.length > 100)
          ? 'A name of at most 100 characters each.'
          : undefined;
  const next: Streams = { attributes: names, default: fallback || null };
  const patch = changedFields(settings, next);
  const unchanged = Object.keys(patch).length === 0;
  const server = problemsOf(change.error, 'streams');
  const reset = () => {
    if (!change.isIdle && !change.isPending) {
      change.reset();
    }
  };
  const known = (streams.data ?? []).some((s) => s.stream === fallback);
  return (
    <form
      aria-label="Streams"
      noValidate
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        setTried(true);
        if (!mine && !unchanged) {
          change.mutate({ streams: patch });
        }
      }}
    >
      <div className="row settings-fields">
        <Field
          label="Attributes"
          name="attributes"
          value={attributes}
          placeholder="branch, env"
          autoComplete="off"
          onChange={(e) => {
            setAttributes(e.target.value);
            reset();
          }}
          error={(tried ? mine : undefined) ?? server.byField.attributes}
          hint="Comma-separated, in order; empty: the run's name alone makes its stream."
        />
        <div className="field">
          <label htmlFor="streams-default">Default stream</label>
          <select
            id="streams-default"
            value={fallback}
            aria-describedby="streams-default-hint"
            aria-invalid={server.byField.default ? true : undefined}
            onChange={(e) => {
              setFallback(e.target.value);
              reset();
            }}
          >
            <option value="">automatic</option>
            {fallback && !known ? <option value={fallback}>{fallback}</option> : null}
            {(streams.data ?? []).map((s) => (
              <option key={s.stream} value={s.stream}>
                {s.stream} · {counted(s.runs, 'run')}
              </option>
            ))}
          </select>
          <span className={server.byField.default ? 'field-error' : 'hint'} id="streams-default-hint">
            {server.byField.default ??
              'What the project page and the projects list show first; automatic: the stream with the most runs in the last 30 days.'}
          </span>
        </div>
      </div>
      {streams.error ? <ErrorMessage error={streams.error} /> : null}
      <SaveProblems error={change.error} server={server} />
      {change.isSuccess ? <Notice>The streams are saved.</Notice> : null}
      <button type="submit" disabled={change.isPending || unchanged}>
        {change.isPending ? 'Saving…' : 'Save the streams'}
      </button>
    </form>
  );
}
