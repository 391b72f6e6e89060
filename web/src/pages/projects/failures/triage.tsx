import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { IssueLink, Signature, Suggestion, Triage, TriageChange } from '../../../api/client';
import { useApi } from '../../../session-context';

/** A triage value as people say it. */
export const TRIAGE_LABELS: Record<Triage, string> = {
  TO_INVESTIGATE: 'To investigate',
  PRODUCT_BUG: 'Product bug',
  AUTOMATION_BUG: 'Automation bug',
  SYSTEM_ISSUE: 'System issue',
  NO_DEFECT: 'No defect',
};

/** The badge's colour: what still needs someone stands out; a judged failure is quieter. */
const TONE: Record<Triage, string> = {
  TO_INVESTIGATE: 'triage-open',
  PRODUCT_BUG: 'triage-product',
  AUTOMATION_BUG: 'triage-automation',
  SYSTEM_ISSUE: 'triage-system',
  NO_DEFECT: 'triage-none',
};

/**
 * A signature's triage as a badge. A suggested one (inherited from a similar signature, API.md "Failure triage
 * across runs") says so until someone confirms or changes it: dashed, "suggested", the similarity in its tooltip.
 */
export function TriageBadge({ triage, suggested }: { triage: Triage; suggested?: Suggestion | null }) {
  return (
    <span
      className={`badge triage ${TONE[triage]}${suggested ? ' triage-suggested' : ''}`}
      title={
        suggested
          ? `Suggested from failure #${suggested.fromId}, ${percent(suggested.similarity)} similar: not confirmed yet`
          : undefined
      }
    >
      {TRIAGE_LABELS[triage]}
      {suggested ? <span className="suggested-mark"> · suggested</span> : null}
    </span>
  );
}

/** A similarity of 0..1 as a whole percent. */
export const percent = (similarity: number) => `${Math.round(similarity * 100)}%`;

/**
 * `url` as a URL when it is http(s), else undefined: only those become links, whatever the service let through
 * (a `javascript:` or `data:` URL is refused there too; this is the second line).
 */
export function httpUrl(url: string | null | undefined): URL | undefined {
  if (!url) {
    return undefined;
  }
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An issue link: its key (PROJ-123), else the host it is on, opened in a new tab that cannot reach back to this
 * one (`noopener`) nor learn where it came from (`noreferrer`). A URL that is not http(s) is shown as text.
 */
export function IssueLinkView({ issue, className }: { issue: IssueLink; className?: string }) {
  const url = httpUrl(issue.url);
  const text = issue.key?.trim() || url?.host || issue.url;
  const title = issue.title?.trim() ? `${issue.title} (${issue.url})` : issue.url;
  if (!url) {
    return (
      <span className={className} title={title}>
        {text}
      </span>
    );
  }
  return (
    <a
      className={className ? `issue-link ${className}` : 'issue-link'}
      href={url.href}
      target="_blank"
      rel="noopener noreferrer"
      title={title}
    >
      {text}
      {/* No space before it: a space would be underlined after the key. */}
      <span className="visually-hidden">, an issue, opens in a new tab</span>
    </a>
  );
}

/** What a person calls someone: the full name, else the email. */
export const personName = (person: { fullName: string; email: string }) =>
  person.fullName?.trim() || person.email;

/**
 * PATCH /api/failures/{id}, then what shows the signature is read again: the failures list, its page, and the run
 * pages' groups (a triage applies to every occurrence, past and future).
 */
export function useTriageFailure() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: ({ id, change }: { id: number; change: TriageChange }) => api.triageFailure(id, change),
    onSuccess: (signature: Signature | undefined, { id }) => {
      if (signature?.id === id) {
        queries.setQueryData<Signature>(['failure', id], (old) => (old ? { ...old, ...signature } : old));
      }
      for (const key of ['failure', 'failures', 'similar', 'groups', 'results']) {
        void queries.invalidateQueries({ queryKey: [key] });
      }
    },
  });
}
