import { useQuery } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useId, useState } from 'react';
import {
  type IssueLink,
  type SignatureDetail,
  type Triage,
  type TriageChange,
  TRIAGES,
} from '../../../api/client';
import { ApiError } from '../../../api/session';
import { useApi, useMe } from '../../../session-context';
import { counted, ErrorMessage, Field, messageOf, Notice } from '../../../ui/components';
import { httpUrl, personName, TRIAGE_LABELS, useTriageFailure } from './triage';

/** The longest note the API keeps, in characters (code points, as PostgreSQL counts them). */
export const NOTE_MAX = 2000;

type FieldName = 'triage' | 'url' | 'key' | 'title' | 'note' | 'assignee';

/**
 * The parts of a 400's message (the API names each offending field, parts joined by "; ") by the field they are
 * about, so each shows beside its field; what names none is `general`.
 */
export function fieldErrors(error: unknown): Partial<Record<FieldName | 'general', string>> {
  if (!(error instanceof ApiError) || error.status !== 400) {
    return error ? { general: messageOf(error) } : {};
  }
  const found: Partial<Record<FieldName | 'general', string>> = {};
  const add = (field: FieldName | 'general', text: string) => {
    found[field] = found[field] ? `${found[field]}; ${text}` : text;
  };
  for (const part of error.message.split(/;\s+/)) {
    const start = part.trimStart();
    const field: FieldName | 'general' = /^issue\.key\b/.test(start)
      ? 'key'
      : /^issue\.title\b/.test(start)
        ? 'title'
        : /^(issue|url)\b/i.test(start)
          ? 'url'
          : /^note\b/i.test(start)
            ? 'note'
            : /^triage\b/i.test(start)
              ? 'triage'
              : /\bassignee/i.test(start)
                ? 'assignee'
                : /\b(url|issue)\b/i.test(start)
                  ? 'url'
                  : /\bnote\b/i.test(start)
                    ? 'note'
                    : /\btriage\b/i.test(start)
                      ? 'triage'
                      : 'general';
    add(field, part);
  }
  return found;
}

const chars = (text: string) => [...text].length;

/** The issue as the form holds it, the way the API compares: no empty key or title. */
function issueOf(url: string, key: string, title: string): IssueLink | null {
  if (!url.trim()) {
    return null;
  }
  return {
    url: url.trim(),
    ...(key.trim() ? { key: key.trim() } : {}),
    ...(title.trim() ? { title: title.trim() } : {}),
  };
}

const sameIssue = (a: IssueLink | null, b: IssueLink | null) =>
  (a?.url ?? '') === (b?.url ?? '') &&
  (a?.key ?? '') === (b?.key ?? '') &&
  (a?.title ?? '') === (b?.title ?? '');

/**
 * Set a signature's triage, its issue link (http(s) only), a note of up to 2,000 characters and who should look
 * at it (a member of the project, or oneself). Saves only what changed; the API's objections show beside their
 * fields.
 */
export function TriageForm({
  failure: f,
  projectId,
  save,
}: {
  failure: SignatureDetail;
  projectId: number;
  /** The save, held by the page: the form starts again from what was saved, and still says that it was. */
  save: ReturnType<typeof useTriageFailure>;
}) {
  const api = useApi();
  const { me } = useMe();
  const members = useQuery({
    queryKey: ['members', projectId, 'all'],
    queryFn: () => api.allMembers(projectId),
    staleTime: 60_000,
  });
  const [triage, setTriage] = useState<Triage>(f.triage);
  const [url, setUrl] = useState(f.issue?.url ?? '');
  const [key, setKey] = useState(f.issue?.key ?? '');
  const [title, setTitle] = useState(f.issue?.title ?? '');
  const [note, setNote] = useState(f.note ?? '');
  const [assignee, setAssignee] = useState(f.assignee ? String(f.assignee.id) : '');
  const [checked, setChecked] = useState<Partial<Record<FieldName, string>>>({});
  const ids = { triage: useId(), assignee: useId(), note: useId() };

  const change: TriageChange = {};
  if (triage !== f.triage) {
    change.triage = triage;
  }
  const issue = issueOf(url, key, title);
  if (!sameIssue(issue, f.issue)) {
    change.issue = issue;
  }
  if (note !== (f.note ?? '')) {
    change.note = note;
  }
  if (assignee !== (f.assignee ? String(f.assignee.id) : '')) {
    change.assigneeId = assignee ? Number(assignee) : null;
  }
  const changed = Object.keys(change).length > 0;
  const noteLength = chars(note);
  const server = save.isError ? fieldErrors(save.error) : {};
  const errors = { ...server, ...checked };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const problems: Partial<Record<FieldName, string>> = {};
    if (url.trim() && !httpUrl(url.trim())) {
      problems.url = 'An issue link must be an http:// or https:// address.';
    }
    if (!url.trim() && (key.trim() || title.trim())) {
      problems.url = 'An issue needs its address; without one, empty the key and title too.';
    }
    if (noteLength > NOTE_MAX) {
      problems.note = `The note is ${counted(noteLength - NOTE_MAX, 'character')} too long.`;
    }
    setChecked(problems);
    if (Object.keys(problems).length === 0 && changed) {
      save.mutate({ id: f.id, change });
    }
  };

  // Whom it can be given to: nobody, oneself, the project's members (one who no longer is stays listed).
  const people = (members.data ?? []).filter((m) => m.userId !== me?.id);
  const current = f.assignee;
  const listed = current && (current.id === me?.id || people.some((m) => m.userId === current.id));

  return (
    <form className="card triage-form" aria-labelledby="triage-form-title" noValidate onSubmit={onSubmit}>
      <h2 id="triage-form-title">Triage this failure</h2>
      <p className="hint">Applies to every occurrence, past and future.</p>
      <FieldBox id={ids.triage} label="Triage" error={errors.triage}>
        <select
          id={ids.triage}
          value={triage}
          aria-invalid={errors.triage ? true : undefined}
          aria-describedby={errors.triage ? `${ids.triage}-error` : undefined}
          onChange={(e) => setTriage(e.target.value as Triage)}
        >
          {TRIAGES.map((t) => (
            <option key={t} value={t}>
              {TRIAGE_LABELS[t]}
            </option>
          ))}
        </select>
      </FieldBox>
      <fieldset className="issue-fields">
        <legend>Issue</legend>
        <Field
          label="Link"
          name="issue-url"
          type="url"
          inputMode="url"
          autoComplete="off"
          placeholder="https://jira.example.com/browse/SHOP-123"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          error={errors.url}
          hint="Empty for no issue."
        />
        <div className="row">
          <Field
            label="Key"
            name="issue-key"
            autoComplete="off"
            placeholder="SHOP-123"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            error={errors.key}
          />
          <Field
            label="Title"
            name="issue-title"
            autoComplete="off"
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            error={errors.title}
          />
        </div>
      </fieldset>
      <FieldBox id={ids.assignee} label="Assignee" error={errors.assignee ?? messageIf(members.error)}>
        <select
          id={ids.assignee}
          value={assignee}
          aria-invalid={errors.assignee ? true : undefined}
          aria-describedby={errors.assignee ? `${ids.assignee}-error` : undefined}
          onChange={(e) => setAssignee(e.target.value)}
        >
          <option value="">Nobody</option>
          {me ? <option value={String(me.id)}>Me ({personName(me)})</option> : null}
          {current && !listed ? <option value={String(current.id)}>{personName(current)}</option> : null}
          {people.map((m) => (
            <option key={m.userId} value={String(m.userId)}>
              {personName(m)}
              {m.fullName ? ` (${m.email})` : ''}
            </option>
          ))}
        </select>
      </FieldBox>
      <div className="field">
        <label htmlFor={ids.note}>Note</label>
        <textarea
          id={ids.note}
          rows={4}
          value={note}
          aria-invalid={errors.note || noteLength > NOTE_MAX ? true : undefined}
          aria-describedby={`${ids.note}-count${errors.note ? ` ${ids.note}-error` : ''}`}
          onChange={(e) => setNote(e.target.value)}
        />
        <span
          id={`${ids.note}-count`}
          className={noteLength > NOTE_MAX ? 'counter field-error' : 'counter hint'}
        >
          {noteLength.toLocaleString()} / {NOTE_MAX.toLocaleString()} characters
        </span>
        {errors.note ? (
          <span className="field-error" id={`${ids.note}-error`}>
            {errors.note}
          </span>
        ) : null}
      </div>
      {server.general ? <ErrorMessage error={new Error(server.general)} /> : null}
      {save.isSuccess && !changed ? <Notice>Saved.</Notice> : null}
      <div className="form-actions">
        <button type="submit" disabled={save.isPending || !changed}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
        {!changed && !save.isSuccess ? <span className="hint">Nothing changed yet.</span> : null}
      </div>
    </form>
  );
}

const messageIf = (error: unknown) =>
  error ? `The members cannot be listed: ${messageOf(error)}` : undefined;

/** A label, a control of one's own (a select) and its error under it. */
function FieldBox({
  id,
  label,
  error,
  children,
}: {
  id: string;
  label: string;
  error?: string;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {error ? (
        <span className="field-error" id={`${id}-error`}>
          {error}
        </span>
      ) : null}
    </div>
  );
}
