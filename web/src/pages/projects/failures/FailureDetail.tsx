import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { roleAtLeast, type SignatureDetail } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, ErrorMessage, Loaded, Page } from '../../../ui/components';
import { RelativeTime } from '../../../ui/relative-time';
import { FailureMessage, Seen } from './FailuresPage';
import { IssueLinkView, percent, personName, TriageBadge, useTriageFailure } from './triage';
import { TriageForm } from './TriageForm';

/**
 * One failure signature: its message and key, when it was first and last seen, the runs it was seen in last and
 * the tests it hits most, the signatures most like it, and its triage (a form for REPORTERs and above).
 */
export function FailureDetail() {
  const api = useApi();
  const params = useParams();
  const projectId = Number(params.projectId);
  const id = Number(params.failureId);
  const project = useQuery({ queryKey: ['project', projectId], queryFn: () => api.getProject(projectId) });
  const failure = useQuery({ queryKey: ['failure', id], queryFn: () => api.getFailure(id) });
  const role = project.data?.role;
  const canTriage = role !== undefined && roleAtLeast(role, 'REPORTER');
  const save = useTriageFailure();
  return (
    <Page
      title={`Failure #${id}`}
      actions={
        failure.data ? <TriageBadge triage={failure.data.triage} suggested={failure.data.suggested} /> : null
      }
    >
      <nav className="links" aria-label="Project">
        <Link to={`/projects/${projectId}/failures`}>
          ← Failures of {project.data?.name ?? 'the project'}
        </Link>
        <Link to={`/projects/${projectId}`}>All runs</Link>
      </nav>
      <Loaded query={failure} what="Loading the failure">
        {(f) => (
          // On a phone: the message, its triage, the similar ones, then where it was seen; on a wide screen the
          // triage beside the rest.
          <div className="failure-body">
            <div className="failure-overview">
              <Overview failure={f} />
            </div>
            <div className="failure-side">
              <Triage failure={f} canTriage={canTriage} />
              {canTriage ? (
                <TriageForm key={formKey(f)} failure={f} projectId={projectId} save={save} />
              ) : null}
              <Similar id={f.id} projectId={projectId} />
            </div>
            <div className="failure-history">
              <RecentRuns failure={f} />
              <TopTests failure={f} />
            </div>
          </div>
        )}
      </Loaded>
    </Page>
  );
}

/** The form starts again from what was saved whenever that changes (a save, another person's change). */
const formKey = (f: SignatureDetail) =>
  JSON.stringify([f.triage, f.issue, f.note, f.assignee?.id ?? null, f.suggested?.fromId ?? null]);

function Overview({ failure: f }: { failure: SignatureDetail }) {
  return (
    <section className="card" aria-labelledby="message-title">
      <h2 id="message-title">Message</h2>
      <p className="hint">One of its {counted(f.occurrences, 'occurrence')}, as it was sent.</p>
      <FailureMessage signature={f} className="failure-message full" />
      <details className="signature-key">
        <summary>Signature</summary>
        <code>{f.key}</code>
      </details>
      <dl className="facts-inline failure-facts">
        <div>
          <dt>First seen</dt>
          <dd>
            <Seen seen={f.firstSeen} />
          </dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd>
            <Seen seen={f.lastSeen} />
          </dd>
        </div>
        <div>
          <dt>Occurrences</dt>
          <dd>{f.occurrences.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Tests</dt>
          <dd>{f.tests.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Runs</dt>
          <dd>{f.runs.toLocaleString()}</dd>
        </div>
      </dl>
    </section>
  );
}

/** The triage as it stands, a suggestion marked as one (with its confirmation), the issue, assignee and note. */
function Triage({ failure: f, canTriage }: { failure: SignatureDetail; canTriage: boolean }) {
  const triage = useTriageFailure();
  return (
    <section className="card" aria-labelledby="triage-title">
      <h2 id="triage-title">Triage</h2>
      <p>
        <TriageBadge triage={f.triage} suggested={f.suggested} />
      </p>
      {f.suggested ? (
        <div className="suggestion" role="note">
          <p>
            Suggested from{' '}
            <Link to={`/projects/${f.projectId}/failures/${f.suggested.fromId}`}>
              failure #{f.suggested.fromId}
            </Link>
            , {percent(f.suggested.similarity)} similar: its triage{f.issue ? ' and issue' : ''}, not
            confirmed yet.
          </p>
          {canTriage ? (
            <>
              <button
                type="button"
                disabled={triage.isPending}
                onClick={() => triage.mutate({ id: f.id, change: { triage: f.triage } })}
              >
                Confirm suggestion
              </button>
              <ErrorMessage error={triage.error} />
            </>
          ) : null}
        </div>
      ) : null}
      <dl className="triage-facts">
        <dt>Issue</dt>
        <dd>{f.issue ? <IssueLinkView issue={f.issue} /> : <span className="hint">none</span>}</dd>
        {f.issue?.title ? (
          <>
            <dt>Issue title</dt>
            <dd className="issue-title">{f.issue.title}</dd>
          </>
        ) : null}
        <dt>Assignee</dt>
        <dd>
          {f.assignee ? (
            <span title={f.assignee.email}>{personName(f.assignee)}</span>
          ) : (
            <span className="hint">nobody</span>
          )}
        </dd>
        <dt>Note</dt>
        <dd>{f.note ? <p className="note-text">{f.note}</p> : <span className="hint">none</span>}</dd>
      </dl>
    </section>
  );
}

function RecentRuns({ failure: f }: { failure: SignatureDetail }) {
  return (
    <section className="card" aria-labelledby="runs-title">
      <h2 id="runs-title">Recent runs</h2>
      {f.recentRuns.length ? (
        <ol className="plain-list">
          {f.recentRuns.map((r) => (
            <li key={r.runId}>
              <Link to={`/runs/${r.runId}`}>{r.name}</Link>{' '}
              <span className="hint">
                <RelativeTime iso={r.at} /> · {counted(r.count, 'occurrence')}
              </span>
            </li>
          ))}
        </ol>
      ) : (
        <p className="empty">No runs with it are kept.</p>
      )}
    </section>
  );
}

function TopTests({ failure: f }: { failure: SignatureDetail }) {
  return (
    <section className="card" aria-labelledby="tests-title">
      <h2 id="tests-title">Tests it hits most</h2>
      {f.topTests.length ? (
        <ol className="plain-list">
          {f.topTests.map((t) => (
            <li key={t.testId}>
              <Link to={`/projects/${f.projectId}/tests/${t.testId}`}>{t.name}</Link>{' '}
              <span className="hint">
                {t.suite} · {counted(t.count, 'time')}
              </span>
            </li>
          ))}
        </ol>
      ) : (
        <p className="empty">No tests with it are kept.</p>
      )}
    </section>
  );
}

/** The signatures most like this one (trigram similarity of the keys), most similar first. */
function Similar({ id, projectId }: { id: number; projectId: number }) {
  const api = useApi();
  const similar = useQuery({ queryKey: ['similar', id], queryFn: () => api.similarFailures(id) });
  return (
    <section className="card" aria-labelledby="similar-title">
      <h2 id="similar-title">Similar failures</h2>
      <Loaded
        query={similar}
        what="Looking for similar failures"
        isEmpty={(list) => list.length === 0}
        empty="None similar enough."
      >
        {(list) => (
          <ol className="plain-list similar-list">
            {list.map(({ signature: s, similarity }) => (
              <li key={s.id}>
                <span className="similarity" title="Similarity of the two signatures">
                  {percent(similarity)}
                </span>
                <div className="similar-text">
                  <Link to={`/projects/${projectId}/failures/${s.id}`} className="similar-link">
                    <code className="message-text clamped">{s.sampleMessage?.trim() || s.key}</code>{' '}
                    <span className="visually-hidden">({percent(similarity)} similar)</span>
                  </Link>
                  <span className="block">
                    <TriageBadge triage={s.triage} suggested={s.suggested} />{' '}
                    {s.issue ? <IssueLinkView issue={s.issue} /> : null}{' '}
                    <span className="hint">{counted(s.occurrences, 'occurrence')}</span>
                  </span>
                </div>
              </li>
            ))}
          </ol>
        )}
      </Loaded>
    </section>
  );
}
