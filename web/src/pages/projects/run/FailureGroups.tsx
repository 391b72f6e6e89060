import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useRef } from 'react';
import { Link } from 'react-router';
import { type FailureGroup, roleAtLeast } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, formatDate, Loaded, noItems, Pager } from '../../../ui/components';
import { useInView } from '../../../ui/use-in-view';
import { IssueLinkView, TriageBadge } from '../failures/triage';
import { TriageMenu } from '../failures/TriageMenu';

/**
 * The run's failures grouped by their normalised message, largest group first; a group filters the table. Each
 * shows a message of its own as it was sent (the normalised key, with its `<n>` and `<id>`, is only its tooltip),
 * whether its cause is new in this run or since when the project has seen it, its triage and issue, and (for
 * REPORTERs and above) a menu to triage it in one click.
 */
export function FailureGroups({
  runId,
  projectId,
  enabled = true,
  active,
  page,
  onPage,
  onPick,
}: {
  runId: number;
  /** The run's project: whether the user may triage. */
  projectId?: number;
  enabled?: boolean;
  active: string;
  page: number;
  onPage: (page: number) => void;
  onPick: (key: string) => void;
}) {
  const api = useApi();
  const groups = useQuery({
    queryKey: ['groups', runId, page],
    queryFn: () => api.failureGroups(runId, page),
    placeholderData: keepPreviousData,
    enabled,
  });
  const project = useQuery({
    queryKey: ['project', projectId],
    queryFn: () => api.getProject(projectId!),
    enabled: projectId !== undefined,
  });
  const role = project.data?.role;
  const canTriage = role !== undefined && roleAtLeast(role, 'REPORTER');
  return (
    <section aria-labelledby="groups-title" className="card">
      <h2 id="groups-title">Failures by cause</h2>
      <Loaded query={groups} what="Grouping failures" isEmpty={noItems} empty="No failures.">
        {(data) => (
          <>
            <p className="hint">
              {counted(data.totalElements, 'cause')}: failures with the same message, numbers, ids and
              temporary paths aside. Each shows one of its messages.
            </p>
            <ol className="groups-list">
              {data.content.map((g) => (
                <GroupItem
                  key={g.key}
                  group={g}
                  projectId={projectId}
                  canTriage={canTriage}
                  active={g.key === active}
                  onPick={() => onPick(g.key)}
                />
              ))}
            </ol>
            <Pager page={page} totalPages={data.totalPages} onPage={onPage} />
          </>
        )}
      </Loaded>
    </section>
  );
}

/** What a group's label says: one of its messages, or the key where none was sent. */
export function groupLabel(group: FailureGroup): string {
  return group.example?.trim() ? group.example : group.key;
}

function GroupItem({
  group,
  projectId,
  canTriage,
  active,
  onPick,
}: {
  group: FailureGroup;
  projectId: number | undefined;
  canTriage: boolean;
  active: boolean;
  onPick: () => void;
}) {
  const api = useApi();
  const item = useRef<HTMLLIElement>(null);
  const inView = useInView(item);
  const id = group.signatureId ?? undefined;
  // Since when and in how many runs, and whether its triage is only suggested: the signature's, read for the
  // groups in view (a page of groups at most), unless the group carries them itself.
  const needsSignature =
    group.firstSeen === undefined || group.runs === undefined || group.suggested === undefined;
  const signature = useQuery({
    queryKey: ['failure', id],
    queryFn: () => api.getFailure(id!),
    enabled: id !== undefined && needsSignature && inView,
    staleTime: 60_000,
  });
  const firstSeen = group.firstSeen ?? signature.data?.firstSeen;
  const runs = group.runs ?? signature.data?.runs;
  const suggested = group.suggested !== undefined ? group.suggested : signature.data?.suggested;
  const triage = group.triage ?? signature.data?.triage;
  const issue = group.issue !== undefined ? group.issue : signature.data?.issue;
  // A triage the group has before anyone looked at it may be a suggestion: not shown as a judgement until known.
  const triageKnown =
    triage !== undefined && (triage === 'TO_INVESTIGATE' || !group.isNew || suggested !== undefined);
  const failures = `the ${group.count} failures of this group`;
  return (
    <li className={active ? 'group active' : 'group'} ref={item} data-testid={id ? `group-${id}` : undefined}>
      <span className="group-count">{group.count.toLocaleString()}</span>
      <div className="group-text">
        <code className="group-example" title={group.key}>
          {groupLabel(group)}
        </code>
        <span className="hint block">
          {counted(group.tests, 'test')}
          {group.failed ? ` · ${group.failed} failed` : ''}
          {group.broken ? ` · ${group.broken} broken` : ''}
        </span>
        {id !== undefined ? (
          <span className="group-triage">
            {group.isNew ? (
              <span className="badge badge-new" title="First seen in this run">
                New
              </span>
            ) : firstSeen && runs !== undefined ? (
              <span className="hint seen-since">
                seen since{' '}
                <time dateTime={firstSeen.at} title={formatDate(firstSeen.at)}>
                  {new Date(firstSeen.at).toLocaleDateString()}
                </time>{' '}
                in {counted(runs, 'run')}
              </span>
            ) : signature.isError ? null : (
              <span className="hint seen-since">seen before</span>
            )}
            {triageKnown && triage ? <TriageBadge triage={triage} suggested={suggested} /> : null}
            {issue ? <IssueLinkView issue={issue} /> : null}
            {projectId !== undefined ? (
              <Link to={`/projects/${projectId}/failures/${id}`} className="group-history">
                history <span className="visually-hidden">of this cause</span>
              </Link>
            ) : null}
          </span>
        ) : null}
      </div>
      <div className="group-actions">
        {canTriage && id !== undefined && triage ? (
          <TriageMenu signatureId={id} triage={triage} suggested={suggested} label={failures} />
        ) : null}
        <button type="button" onClick={onPick} aria-pressed={active}>
          Show <span className="visually-hidden">{failures}</span>
        </button>
      </div>
    </li>
  );
}
