import { gateProject } from '../support/gate-project.js';

/**
 * What the quality gate leaves out (API.md, "Quality gate"): results of quarantined tests (test health, #36), and its
 * evaluation again when a quarantine changes while the run is the latest finished run of its stream.
 */
describe('Quality gate: quarantined tests', () => {
  const g = gateProject('GATEQ', 'Gate ignores');
  const { send, gateOf, gateBecomes, settle, run, resultOf } = g;

  it("leaves a quarantined test's results out, and evaluates the stream's latest run again on (un)quarantine", async () => {
    await settle({ minPassRate: 100 });
    const older = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    const latest = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    expect((await gateOf(latest)).status).toBe('FAILED');
    const { testId } = await resultOf(latest, 'flaky');

    await send('put', `/api/projects/${g.projectId}/tests/${testId}/quarantine`, {
      reason: 'flips on CI',
    }).expect(200);
    const gate = await gateBecomes(latest, 'PASSED');
    expect(gate.conditions).toEqual([
      { name: 'maxFailed', expected: 0, actual: 0, passed: true },
      { name: 'minPassRate', expected: 100, actual: 100, passed: true },
    ]);
    expect(gate.ignored).toEqual({ quarantined: 1, knownIssues: 0 });
    // Only the latest finished run of the stream is evaluated again.
    expect(await gateOf(older)).toMatchObject({
      status: 'FAILED',
      ignored: { quarantined: 0, knownIssues: 0 },
    });
    // A new run finished while the test is quarantined: left out from the start.
    expect((await gateOf(await run('q', { a: 'PASSED', flaky: 'BROKEN' }))).ignored.quarantined).toBe(1);

    // Not left out when the project says so.
    await settle({ ignoreQuarantined: false });
    const counted = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    expect(await gateOf(counted)).toMatchObject({
      status: 'FAILED',
      ignored: { quarantined: 0, knownIssues: 0 },
    });

    // Released: the stream's latest run, which passed as the test was left out, is evaluated again and fails.
    await settle({});
    const again = await run('q', { a: 'PASSED', flaky: 'FAILED' });
    expect((await gateOf(again)).status).toBe('PASSED');
    await send('delete', `/api/projects/${g.projectId}/tests/${testId}/quarantine`).expect(204);
    expect((await gateBecomes(again, 'FAILED')).ignored).toEqual({ quarantined: 0, knownIssues: 0 });
  });
});
