import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { GateCondition, Run, RunGate as Gate } from '../../../api/client';
import { useApi } from '../../../session-context';
import { counted, formatDate, Loaded } from '../../../ui/components';
import { actualOf, CONDITION_TITLES, expectedOf, GateBadge } from '../../../ui/gate';
import { RelativeTime } from '../../../ui/relative-time';

/**
 * The run's quality gate: its verdict, each condition with what it asks for and what the run had (those that failed
 * marked, with a way to the tests behind them), and what the gate left out and why. Read once the run is finished
 * (in progress it is pending, and a project that turned the gate off has nothing to show); the run page refreshes
 * it on the project's live events (run.gate among them).
 */
export function RunGate({ run }: { run: Run }) {
  const api = useApi();
  const status = run.gate.status;
  const decided = run.status === 'FINISHED' && status !== 'OFF';
  const gate = useQuery({
    queryKey: ['gate', run.id],
    queryFn: () => api.getRunGate(run.id),
    enabled: decided,
  });
  return (
    <section aria-labelledby="gate-title" className={`card gate-card gate-card-${status.toLowerCase()}`}>
      <h2 id="gate-title">
        Quality gate <GateBadge status={status} />
      </h2>
      {run.status !== 'FINISHED' ? (
        <p className="hint">Decided when the run finishes.</p>
      ) : status === 'OFF' ? (
        <p className="hint">
          The project has turned its quality gate off: its runs are not held to conditions.
        </p>
      ) : (
        <Loaded query={gate} what="Reading the gate">
          {(data) => <GateDetails run={run} gate={data} />}
        </Loaded>
      )}
    </section>
  );
}

function GateDetails({ run, gate }: { run: Run; gate: Gate }) {
  if (gate.status === 'PENDING') {
    return <p className="hint">Being evaluated: the verdict follows in a moment.</p>;
  }
  const failed = gate.conditions.filter((c) => !c.passed);
  return (
    <>
      <p className="gate-verdict">
        {gate.conditions.length === 0
          ? 'No condition is set: the gate passes every finished run.'
          : failed.length
            ? `${counted(failed.length, 'condition')} of ${gate.conditions.length} not met: ${failed
                .map((c) => CONDITION_TITLES[c.name].toLowerCase())
                .join(', ')}.`
            : `All ${counted(gate.conditions.length, 'condition')} met.`}
        {gate.evaluatedAt ? (
          <span className="hint">
            {' '}
            Evaluated <RelativeTime iso={gate.evaluatedAt} />
            <span className="visually-hidden"> ({formatDate(gate.evaluatedAt)})</span>.
          </span>
        ) : null}
      </p>
      {gate.conditions.length ? (
        <table className="gate-conditions">
          <caption className="visually-hidden">Conditions of the quality gate</caption>
          <thead>
            <tr>
              <th scope="col">Condition</th>
              <th scope="col">Needed</th>
              <th scope="col">This run</th>
              <th scope="col">
                <span className="visually-hidden">Met</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {gate.conditions.map((c) => (
              <tr key={c.name} className={c.passed ? 'gate-held' : 'gate-broken'}>
                <th scope="row">{CONDITION_TITLES[c.name]}</th>
                <td>{expectedOf(c)}</td>
                <td>
                  {actualOf(c)}
                  {c.passed ? null : <ConditionLink run={run} condition={c} />}
                </td>
                <td className="gate-mark">{c.passed ? '✓ met' : '✗ not met'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Ignored ignored={gate.ignored} />
    </>
  );
}

/** Where the tests behind a condition that failed are. */
function ConditionLink({ run, condition }: { run: Run; condition: GateCondition }) {
  if (condition.name === 'maxFailed' || condition.name === 'minPassRate') {
    return (
      <>
        {' · '}
        <Link to={`/runs/${run.id}?status=FAILED%2CBROKEN`}>
          the failures <span className="visually-hidden">of {run.name}</span>
        </Link>
      </>
    );
  }
  if (condition.name === 'noNewFailures') {
    return (
      <>
        {' · '}
        <Link to={`/runs/${run.id}/compare?change=NEW_FAILURE`}>
          the new failures <span className="visually-hidden">of {run.name}</span>
        </Link>
      </>
    );
  }
  return null;
}

/** What the gate left out and why; nothing when it left nothing out. */
function Ignored({ ignored }: { ignored: Gate['ignored'] }) {
  if (!ignored.quarantined && !ignored.knownIssues) {
    return null;
  }
  return (
    <div className="gate-ignored">
      <h3>Not counted</h3>
      <ul>
        {ignored.quarantined ? (
          <li>
            {counted(ignored.quarantined, 'result')} of quarantined tests: a quarantined test still runs, but
            does not count against the gate.
          </li>
        ) : null}
        {ignored.knownIssues ? (
          <li>
            {counted(ignored.knownIssues, 'failure')} with a known issue: their failure is triaged, or linked
            to an issue, so it is not news.
          </li>
        ) : null}
      </ul>
    </div>
  );
}
