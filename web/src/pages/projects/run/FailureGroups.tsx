import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { FailureGroup } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, Loaded, noItems, Pager } from '../../../ui/components';

/**
 * The run's failures grouped by their normalised message, largest group first; a group filters the table. Each
 * shows a message of its own as it was sent (the normalised key, with its `<n>` and `<id>`, is only its tooltip).
 */
export function FailureGroups({
  runId,
  enabled = true,
  active,
  page,
  onPage,
  onPick,
}: {
  runId: number;
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
                <GroupItem key={g.key} group={g} active={g.key === active} onPick={() => onPick(g.key)} />
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

function GroupItem({ group, active, onPick }: { group: FailureGroup; active: boolean; onPick: () => void }) {
  return (
    <li className={active ? 'group active' : 'group'}>
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
      </div>
      <button type="button" onClick={onPick} aria-pressed={active}>
        Show <span className="visually-hidden">the {group.count} failures of this group</span>
      </button>
    </li>
  );
}
