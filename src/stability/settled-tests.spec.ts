import { SETTLED, SettledTests } from './settled-tests.js';

const P = '7';
const STARTED = Date.parse('2026-11-29T10:00:00Z');

/** Whether `settled` knows test `id` of P steady (`failing` false) or failing steadily for run `run` started `at`. */
function knows(
  settled: SettledTests,
  id: string,
  failing: boolean,
  run: number,
  at: number,
  project = P,
): boolean {
  const kind = settled.forRun(project, run, at)?.(id);
  return kind !== undefined && (kind & ~SETTLED.RECENT) === (failing ? SETTLED.FAILED : SETTLED.STEADY);
}

/** A cache that knows project P up to change `n`, with `steady` and `failing` read settled in run 10. */
function knowing(
  n: string,
  tests: { steady?: string[]; failing?: string[] } = {},
  capacity = 100,
): SettledTests {
  const settled = new SettledTests(capacity);
  settled.apply(P, n, []);
  settled.remember(P, n, 10, STARTED, {
    steady: tests.steady ?? [],
    failed: tests.failing ?? [],
    broken: [],
  });
  return settled;
}

describe('SettledTests', () => {
  it('knows nothing of a project until it has read its changes, and starts from the last one', () => {
    const settled = new SettledTests(100);
    expect(settled.known(P)).toBeUndefined();
    expect(knows(settled, '1', false, 11, STARTED)).toBe(false);
    settled.apply(P, '5', []);
    expect(settled.known(P)).toBe('5');
  });

  it('answers a test read steady or failing steadily for a later run started no earlier, of its own kind only', () => {
    const settled = knowing('5', { steady: ['1'], failing: ['2'] });
    expect(knows(settled, '1', false, 11, STARTED)).toBe(true);
    expect(knows(settled, '1', false, 11, STARTED + 60_000)).toBe(true);
    expect(knows(settled, '2', true, 11, STARTED)).toBe(true);
    // Its kind: a failure of a steady test, a pass of a failing one, are read.
    expect(knows(settled, '1', true, 11, STARTED)).toBe(false);
    expect(knows(settled, '2', false, 11, STARTED)).toBe(false);
    // The run it was read in, an earlier one, a later one that started before it: its row may say otherwise.
    expect(knows(settled, '1', false, 10, STARTED)).toBe(false);
    expect(knows(settled, '1', false, 9, STARTED)).toBe(false);
    expect(knows(settled, '1', false, 11, STARTED - 1)).toBe(false);
    // Another test, another project.
    expect(knows(settled, '3', false, 11, STARTED)).toBe(false);
    expect(knows(settled, '1', false, 11, STARTED, '8')).toBe(false);
  });

  it("tells a failing test's last status, and whether it was read in a run that started less than an hour before, that day", () => {
    const settled = new SettledTests(100);
    const late = Date.parse('2026-11-29T23:30:00Z');
    settled.apply(P, '5', []);
    settled.remember(P, '5', 10, late, { steady: ['1'], failed: ['2'], broken: ['3'] });
    const kinds = (run: number, at: number) =>
      ['1', '2', '3', '4'].map((id) => settled.forRun(P, run, at)?.(id));
    expect(kinds(11, late)).toEqual([
      SETTLED.STEADY | SETTLED.RECENT,
      SETTLED.FAILED | SETTLED.RECENT,
      SETTLED.BROKEN | SETTLED.RECENT,
      undefined,
    ]);
    expect(kinds(11, late + 29 * 60_000)).toEqual([
      SETTLED.STEADY | SETTLED.RECENT,
      SETTLED.FAILED | SETTLED.RECENT,
      SETTLED.BROKEN | SETTLED.RECENT,
      undefined,
    ]);
    // The next day (its last failure would sort on the day before), and an hour later.
    expect(kinds(11, late + 31 * 60_000)).toEqual([
      SETTLED.STEADY,
      SETTLED.FAILED,
      SETTLED.BROKEN,
      undefined,
    ]);
    settled.remember(P, '5', 20, STARTED, { steady: [], failed: ['2'], broken: [] });
    expect(settled.forRun(P, 21, STARTED + 3_599_999)?.('2')).toBe(SETTLED.FAILED | SETTLED.RECENT);
    expect(settled.forRun(P, 21, STARTED + 3_600_000)?.('2')).toBe(SETTLED.FAILED);
  });

  it('remembers a later read of a test in place of the earlier one', () => {
    const settled = knowing('5', { steady: ['1'] });
    settled.remember(P, '5', 20, STARTED + 1000, { steady: [], failed: ['1'], broken: [] });
    expect(knows(settled, '1', false, 21, STARTED + 1000)).toBe(false);
    expect(knows(settled, '1', true, 21, STARTED + 1000)).toBe(true);
    expect(knows(settled, '1', true, 20, STARTED + 1000)).toBe(false);
  });

  it('forgets the tests a change names, and only those', () => {
    const settled = knowing('5', { steady: ['1', '2'], failing: ['3'] });
    settled.apply(P, '7', [
      { n: '6', testIds: ['1'] },
      { n: '7', testIds: ['3', '99'] },
    ]);
    expect(settled.known(P)).toBe('7');
    expect(knows(settled, '1', false, 11, STARTED)).toBe(false);
    expect(knows(settled, '2', false, 11, STARTED)).toBe(true);
    expect(knows(settled, '3', true, 11, STARTED)).toBe(false);
  });

  it('forgets the whole project for a change of any test, or a log that does not follow on from what it knew', () => {
    const any = knowing('5', { steady: ['1', '2'] });
    any.apply(P, '6', [{ n: '6', testIds: null }]);
    expect(any.known(P)).toBe('6');
    expect(knows(any, '2', false, 11, STARTED)).toBe(false);

    // Change 6 was deleted from the log (it keeps the latest ones): what it named is not known.
    const behind = knowing('5', { steady: ['1', '2'] });
    behind.apply(P, '8', [
      { n: '7', testIds: ['1'] },
      { n: '8', testIds: ['1'] },
    ]);
    expect(behind.known(P)).toBe('8');
    expect(knows(behind, '2', false, 11, STARTED)).toBe(false);
  });

  it('never goes back to a change it knew before: a write that read the log earlier brings nothing older', () => {
    const settled = knowing('5', { steady: ['1', '2'] });
    settled.apply(P, '6', [{ n: '6', testIds: ['1'] }]);
    // A write that read the log at 5 (nothing since then), and one that read 6 too.
    settled.apply(P, '5', []);
    expect(settled.known(P)).toBe('6');
    settled.apply(P, '7', [
      { n: '6', testIds: ['1'] },
      { n: '7', testIds: ['2'] },
    ]);
    expect(settled.known(P)).toBe('7');
    expect(knows(settled, '2', false, 11, STARTED)).toBe(false);
    // So what a write read at 5 is not remembered.
    settled.remember(P, '5', 10, STARTED, { steady: ['1'], failed: [], broken: [] });
    expect(knows(settled, '1', false, 11, STARTED)).toBe(false);
  });

  it('does not remember what a write read while it knew less than the process does now', () => {
    const settled = knowing('5');
    // Another write read change 6 meanwhile (test 1 changed); this one read test 1 before it.
    settled.apply(P, '6', [{ n: '6', testIds: ['1'] }]);
    settled.remember(P, '5', 10, STARTED, { steady: ['1'], failed: [], broken: [] });
    expect(knows(settled, '1', false, 11, STARTED)).toBe(false);
    settled.remember(P, '6', 10, STARTED, { steady: ['1'], failed: [], broken: [] });
    expect(knows(settled, '1', false, 11, STARTED)).toBe(true);
  });

  it('forgets everything past its capacity, and remembers nothing at capacity 0', () => {
    const settled = knowing('5', { steady: ['1', '2', '3'] }, 4);
    settled.remember(P, '5', 10, STARTED, { steady: ['1', '2'], failed: [], broken: [] });
    expect(knows(settled, '1', false, 11, STARTED)).toBe(true);
    settled.remember(P, '5', 10, STARTED, { steady: ['4', '5'], failed: [], broken: [] });
    expect(knows(settled, '1', false, 11, STARTED)).toBe(false);
    expect(knows(settled, '4', false, 11, STARTED)).toBe(false);

    const off = knowing('5', { steady: ['1'] }, 0);
    expect(off.enabled).toBe(false);
    expect(knows(off, '1', false, 11, STARTED)).toBe(false);
  });
});
