import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { type Quarantine, roleAtLeast, type TestCase } from '../../../api/client';
import { useApi, useMe } from '../../../session-context';
import { formatDate } from '../../../ui/components';
import { outcomeOf, OutcomeLine, said } from '../../../ui/outcome';
import { RelativeTime } from '../../../ui/relative-time';
import { FlakeRate, STATE_MEANINGS } from '../../../ui/test-health';
import { useQuarantineActions } from './queries';
import { QuarantineForm } from './QuarantineForm';

/**
 * One test's health on its history page: its state and what it means, its flake rate over the window, when it was
 * first seen and last failed, and its quarantine (the reason, who set it or that the policy did, since and until).
 * MAINTAINERs quarantine it (a reason, a last day if they like) or release it here.
 */
export function TestHealth({ projectId, test }: { projectId: number; test: TestCase }) {
  const api = useApi();
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const canQuarantine = project.data !== undefined && roleAtLeast(project.data.role, 'MAINTAINER');
  const { quarantine, release } = useQuarantineActions(projectId);
  const [formOpen, setFormOpen] = useState(false);
  const outcome = outcomeOf({
    quarantine: said(quarantine, () => 'The test is quarantined.'),
    release: said(release, () => 'The test is released from quarantine.'),
  });
  // Before the service reports health (an older one), there is nothing to show.
  if (!test.state) {
    return null;
  }
  const q = test.quarantine;
  return (
    <section className="card test-health" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      <p className="hint">{STATE_MEANINGS[test.state]}.</p>
      <dl className="facts-inline health-facts">
        <div>
          <dt>Flake rate</dt>
          <dd>
            <FlakeRate rate={test.flakeRate} runs={test.runs} />
          </dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{test.firstSeenAt ? <RelativeTime iso={test.firstSeenAt} /> : '—'}</dd>
        </div>
        <div>
          <dt>Last failed</dt>
          <dd>{test.lastFailedAt ? <RelativeTime iso={test.lastFailedAt} /> : 'never'}</dd>
        </div>
      </dl>
      {q ? <QuarantineFacts projectId={projectId} quarantine={q} /> : null}
      <OutcomeLine of={outcome} only={outcome.errorOf('quarantine') ? [] : undefined} />
      {canQuarantine ? (
        q ? (
          <button
            type="button"
            className="secondary"
            disabled={release.isPending}
            onClick={() => release.mutate(test)}
          >
            Release from quarantine
          </button>
        ) : formOpen ? (
          <QuarantineForm
            testName={test.name}
            pending={quarantine.isPending}
            error={quarantine.error}
            onCancel={() => setFormOpen(false)}
            onSubmit={(request) =>
              quarantine.mutate({ test, request }, { onSuccess: () => setFormOpen(false) })
            }
          />
        ) : (
          <button
            type="button"
            className="secondary"
            aria-expanded={false}
            onClick={() => {
              quarantine.reset();
              setFormOpen(true);
            }}
          >
            Quarantine…
          </button>
        )
      ) : null}
    </section>
  );
}

/** The quarantine: its reason, who set it (a member's name, "you", or the policy), since and until when. */
function QuarantineFacts({ projectId, quarantine: q }: { projectId: number; quarantine: Quarantine }) {
  const by = useUserName(projectId, q.auto ? null : q.byUserId);
  return (
    <div className="quarantine-facts" role="group" aria-label="Quarantine">
      <h3>Quarantined{q.auto ? <span className="badge auto-badge">auto</span> : null}</h3>
      <p className="quarantine-reason">{q.reason}</p>
      <p className="hint">
        {q.auto ? 'Automatically, by the flaky tests policy' : `By ${by}`}, since{' '}
        <time dateTime={q.since} title={formatDate(q.since)}>
          {formatDate(q.since)}
        </time>
        {q.until ? (
          <>
            ; it ends by itself after <time dateTime={q.until}>{formatDate(q.until)}</time>
          </>
        ) : q.auto ? (
          '; released after enough passing runs in a row'
        ) : (
          '; no end date'
        )}
        .
      </p>
    </div>
  );
}

/**
 * A user as people know them: "you", a member's name (GET /api/projects/{id}/members, read only when there is a
 * user to name), else "user #id" (a platform admin who is not a member, or someone since removed).
 */
function useUserName(projectId: number, userId: number | null): string {
  const api = useApi();
  const { me } = useMe();
  const members = useQuery({
    queryKey: ['members', projectId, 'all'],
    queryFn: () => api.listMembers(projectId, 0, 500),
    enabled: userId !== null && userId !== me?.id,
    staleTime: 60_000,
  });
  if (userId === null) {
    return 'someone';
  }
  if (userId === me?.id) {
    return 'you';
  }
  const member = members.data?.content.find((m) => m.userId === userId);
  return member ? `${member.fullName || member.email} (${member.email})` : `user #${userId}`;
}
