import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link, useParams } from 'react-router';
import { type Signature, TRIAGES } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, Loaded, noItems, Page, Pager } from '../../../ui/components';
import { RelativeTime } from '../../../ui/relative-time';
import { SearchField } from '../../../ui/SearchField';
import { useUrlState } from '../../../ui/url-state';
import { IssueLinkView, personName, TRIAGE_LABELS, TriageBadge } from './triage';

const KEYS = ['q', 'triage', 'assignee', 'new', 'sort', 'page'] as const;

/** The orders the API has (`sort` on lastSeen, occurrences, firstSeen), the first the default. */
export const FAILURE_SORTS: [string, string][] = [
  ['lastSeen,desc', 'last seen, latest first'],
  ['occurrences,desc', 'occurrences, most first'],
  ['firstSeen,desc', 'first seen, latest first'],
  ['firstSeen,asc', 'first seen, earliest first'],
];

/**
 * A project's failures by cause across its runs (its failure signatures): each with a message it was seen with,
 * how often and where, since when, and how it was judged (triage, issue, assignee). Filters (new, untriaged, by
 * triage, assigned to me), the search, the sort and the page are in the URL.
 */
export function FailuresPage() {
  const api = useApi();
  const projectId = Number(useParams().projectId);
  const [filters, set] = useUrlState(KEYS);
  const page = Number(filters.page || 0);
  const sort = filters.sort || FAILURE_SORTS[0][0];
  const filtered = filters.q !== '' || filters.triage !== '' || filters.assignee !== '' || filters.new !== '';
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const failures = useQuery({
    queryKey: ['failures', projectId, filters],
    queryFn: () =>
      api.listFailures(projectId, {
        q: filters.q,
        triage: filters.triage,
        assignee: filters.assignee,
        new: filters.new === 'true' ? 'true' : undefined,
        sort,
        page,
      }),
    placeholderData: keepPreviousData,
  });
  const name = project.data?.name;
  return (
    <Page title={name ? `Failures of ${name}` : 'Failures'}>
      <nav className="links" aria-label="Project">
        <Link to={`/projects/${projectId}`}>← All runs of the project</Link>
      </nav>
      <p className="hint lead">
        Failed and broken results grouped by cause across every run: the same message and place in the code,
        numbers, ids and temporary paths aside.
      </p>
      <div className="quick-filters" role="group" aria-label="Show">
        <Toggle pressed={filters.new === 'true'} onClick={() => set({ new: filters.new ? '' : 'true' })}>
          New
        </Toggle>
        <Toggle
          pressed={filters.triage === 'TO_INVESTIGATE'}
          onClick={() => set({ triage: filters.triage === 'TO_INVESTIGATE' ? '' : 'TO_INVESTIGATE' })}
        >
          Untriaged
        </Toggle>
        <Toggle
          pressed={filters.assignee === 'me'}
          onClick={() => set({ assignee: filters.assignee === 'me' ? '' : 'me' })}
        >
          Assigned to me
        </Toggle>
      </div>
      <div className="filters" role="search" aria-label="Filter failures">
        <SearchField
          id="failure-q"
          label="Search messages"
          value={filters.q}
          placeholder="a word or a fragment"
          onSearch={(q) => set({ q }, { replace: true })}
        />
        <div className="field">
          <label htmlFor="failure-triage">Triage</label>
          <select
            id="failure-triage"
            value={filters.triage}
            onChange={(e) => set({ triage: e.target.value })}
          >
            <option value="">any</option>
            {TRIAGES.map((t) => (
              <option key={t} value={t}>
                {TRIAGE_LABELS[t]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="failure-sort">Sort by</label>
          <select
            id="failure-sort"
            value={sort}
            onChange={(e) => set({ sort: e.target.value === FAILURE_SORTS[0][0] ? '' : e.target.value })}
          >
            {FAILURE_SORTS.some(([value]) => value === sort) ? null : <option value={sort}>{sort}</option>}
            {FAILURE_SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </div>
      {filters.assignee !== '' && filters.assignee !== 'me' ? (
        <p className="notice" role="status">
          Showing the failures assigned to user #{filters.assignee}.{' '}
          <button type="button" className="link" onClick={() => set({ assignee: '' })}>
            Anyone&apos;s
          </button>
        </p>
      ) : null}
      <Loaded
        query={failures}
        what="Loading failures"
        isEmpty={noItems}
        empty={
          filtered ? (
            <>
              No failures match these filters.{' '}
              <button
                type="button"
                className="link"
                onClick={() => set({ q: '', triage: '', assignee: '', new: '' })}
              >
                Clear the filters
              </button>
            </>
          ) : (
            'No failures yet: failed and broken results appear here, grouped by cause, as runs report them.'
          )
        }
      >
        {(data) => (
          <>
            <p className="hint" aria-live="polite">
              {counted(data.totalElements, 'cause')} of failure
            </p>
            <FailuresTable projectId={projectId} failures={data.content} />
            <Pager page={page} totalPages={data.totalPages} onPage={(p) => set({ page: String(p) })} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

function Toggle({
  pressed,
  onClick,
  children,
}: {
  pressed: boolean;
  onClick: () => void;
  children: React.ReactNode;
}) {
  return (
    <button type="button" className="toggle" aria-pressed={pressed} onClick={onClick}>
      {children}
    </button>
  );
}

/** The signatures, one a row; on a phone one a card, each cell saying what it is (styles.css). */
function FailuresTable({ projectId, failures }: { projectId: number; failures: Signature[] }) {
  return (
    <div className="table-wrap">
      <table className="failures">
        <caption className="visually-hidden">Failures by cause</caption>
        <thead>
          <tr>
            <th scope="col">Failure</th>
            <th scope="col">Triage</th>
            <th scope="col" className="num">
              Occurrences
            </th>
            <th scope="col" className="num">
              Tests
            </th>
            <th scope="col" className="num">
              Runs
            </th>
            <th scope="col">Last seen</th>
            <th scope="col">First seen</th>
          </tr>
        </thead>
        <tbody>
          {failures.map((f) => (
            <tr key={f.id} data-testid={`failure-${f.id}`}>
              <td className="c-failure">
                <FailureMessage
                  signature={f}
                  to={`/projects/${projectId}/failures/${f.id}`}
                  className="failure-message"
                />
              </td>
              <td className="c-triage" data-label="Triage">
                <TriageBadge triage={f.triage} suggested={f.suggested} />
                {f.issue ? <IssueLinkView issue={f.issue} className="block" /> : null}
                {f.assignee ? (
                  <span className="hint block" title={f.assignee.email}>
                    <span className="visually-hidden">assigned to </span>→ {personName(f.assignee)}
                  </span>
                ) : null}
              </td>
              <td className="num" data-label="Occurrences">
                {f.occurrences.toLocaleString()}
              </td>
              <td className="num" data-label="Tests">
                {f.tests.toLocaleString()}
              </td>
              <td className="num" data-label="Runs">
                {f.runs.toLocaleString()}
              </td>
              <td className="c-seen" data-label="Last seen">
                <Seen seen={f.lastSeen} />
              </td>
              <td className="c-seen" data-label="First seen">
                <Seen seen={f.firstSeen} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** When and in which run: "3 h ago", the exact time in its tooltip (and under it on wide screens), the run a link. */
export function Seen({ seen }: { seen: { runId: number; at: string } }) {
  return (
    <Link to={`/runs/${seen.runId}`} className="seen">
      <RelativeTime iso={seen.at} /> <span className="visually-hidden">(run {seen.runId})</span>
      <span className="hint block wide-only exact-time">
        {new Date(seen.at).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })}
      </span>
    </Link>
  );
}

/** Longer than three lines would show, as near as can be told without laying it out. */
const isLong = (text: string) => text.length > 180 || text.split('\n').length > 3;

/**
 * A signature's sample message as plain text (never markup), three lines of it with the rest a click away; the
 * normalised key where no message was sent. A link to the signature's page when `to` is given.
 */
export function FailureMessage({
  signature,
  to,
  className,
}: {
  signature: Pick<Signature, 'sampleMessage' | 'key'>;
  to?: string;
  className?: string;
}) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const text = signature.sampleMessage?.trim() ? signature.sampleMessage : signature.key || '(no message)';
  const code = (
    <code id={id} className={open ? 'message-text' : 'message-text clamped'} title={signature.key}>
      {text}
    </code>
  );
  return (
    <div className={className}>
      {to ? <Link to={to}>{code}</Link> : code}
      {isLong(text) ? (
        <button
          type="button"
          className="link expand"
          aria-expanded={open}
          aria-controls={id}
          onClick={() => setOpen(!open)}
        >
          {open ? 'Show less' : 'Show all'} <span className="visually-hidden">of the message</span>
        </button>
      ) : null}
    </div>
  );
}
