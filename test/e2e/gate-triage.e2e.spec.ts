import { gateProject } from '../support/gate-project.js';

/**
 * What the quality gate leaves out (API.md, "Quality gate"): failures whose signature has an issue or a triage other
 * than TO_INVESTIGATE (failure triage, #37), noNewFailures by new signatures, and the gate's evaluation again when a
 * triage changes while the run is the latest finished run of its stream.
 */
describe('Quality gate: known issues and new failures', () => {
  const g = gateProject('GATET', 'Gate ignores');
  const { send, gateOf, gateBecomes, settle, run, resultOf } = g;

  it('leaves out a failure whose signature was triaged or given an issue, and evaluates the latest run again', async () => {
    await settle({});
    const latest = await run('t', { a: 'PASSED', b: 'FAILED' });
    expect((await gateOf(latest)).status).toBe('FAILED');
    const { failure } = await resultOf(latest, 'b');

    await send('patch', `/api/failures/${failure!.signatureId}`, { triage: 'PRODUCT_BUG' }).expect(200);
    const gate = await gateBecomes(latest, 'PASSED');
    expect(gate.ignored).toEqual({ quarantined: 0, knownIssues: 1 });
    expect(gate.conditions).toEqual([{ name: 'maxFailed', expected: 0, actual: 0, passed: true }]);

    // Back to TO_INVESTIGATE: counted again; an issue alone makes it known too.
    await send('patch', `/api/failures/${failure!.signatureId}`, { triage: 'TO_INVESTIGATE' }).expect(200);
    await gateBecomes(latest, 'FAILED');
    await send('patch', `/api/failures/${failure!.signatureId}`, {
      issue: { url: 'https://issues.example.com/SHOP-12', key: 'SHOP-12' },
    }).expect(200);
    expect((await gateBecomes(latest, 'PASSED')).ignored.knownIssues).toBe(1);

    // Counted when the project says so.
    await settle({ ignoreKnownIssues: false });
    expect(await gateOf(await run('t', { a: 'PASSED', b: 'FAILED' }))).toMatchObject({
      status: 'FAILED',
      ignored: { quarantined: 0, knownIssues: 0 },
    });
  });

  it('noNewFailures counts new signatures still to investigate, and lets a run pass once they are triaged', async () => {
    // A project of its own: here a's message is much like b's above, triaged, and a new signature that similar
    // to a triaged one takes its triage and issue as a suggestion (API.md), which would make it a known issue.
    await g.newProject('GATEN', 'Gate news');
    await settle({ maxFailed: null, noNewFailures: true });
    const first = await run('n', { a: 'FAILED' });
    // a's signature is new in the stream's first run too: a first run's failures are news.
    expect(await gateOf(first)).toMatchObject({
      status: 'FAILED',
      conditions: [{ name: 'noNewFailures', expected: 0, actual: 1, passed: false }],
    });
    // The same failure again: its signature is not new any more.
    const again = await run('n', { a: 'FAILED' });
    expect((await gateOf(again)).conditions).toEqual([
      { name: 'noNewFailures', expected: 0, actual: 0, passed: true },
    ]);
    const novel = await run('n', { a: 'FAILED', c: 'BROKEN' });
    expect((await gateOf(novel)).status).toBe('FAILED');
    const { failure } = await resultOf(novel, 'c');
    expect(failure!.isNew).toBe(true);
    await send('patch', `/api/failures/${failure!.signatureId}`, { triage: 'AUTOMATION_BUG' }).expect(200);
    expect((await gateBecomes(novel, 'PASSED')).conditions).toEqual([
      { name: 'noNewFailures', expected: 0, actual: 0, passed: true },
    ]);
  });
});
