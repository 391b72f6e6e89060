import type { EntityManager } from 'typeorm';
import type { DeletedFailures } from '../results/results-observers.js';

/**
 * Takes away from failure signatures what the failing results a purge batch deleted had added (ResultsObserver.
 * resultsDeleted; the batch deleted their failure_results rows with them and handed over, by signature, test and run,
 * how many there were): the same counts the writer (signatures.writer.ts) adds, taken away the same way, by the rows
 * of those signatures, tests and runs only, never a scan of a project's results.
 *
 * 1. The tests' link rows, row-locked in (signature, test) order as the writer locks them: each loses the deleted
 *    results' count, and goes when none is left (the test has no failing result of the signature any more).
 * 2. The runs' link rows likewise (a deleted run's: no writer adds to it; the purge takes them batch by batch).
 * 3. The signatures, row-locked in id order FOR NO KEY UPDATE as the writer locks them (the link rows a concurrent
 *    write has just inserted hold KEY SHARE locks on them), with the signatures that took a suggestion from one about
 *    to be left without occurrences (their rows change when it goes): occurrences, tests and runs lose what went, and a
 *    signature whose first (last) run lost its link row has its first (last) seen read again from the run links
 *    left (ix_failure_signature_runs_seen: an index probe each). While the deleted runs' purge goes on, those may
 *    still name one of them; they are exact once it is through, as the counts are.
 * 4. The signatures left without occurrences go: the suggestions they made stay as triage and issue of their own
 *    (they are no suggestion any more), and their link rows go with them. A signature a concurrent write holds (FOR KEY
 *    SHARE: it is adding occurrences to it, or suggesting from it) is passed over (SKIP LOCKED) rather than waited for,
 *    as that write may be waiting for this batch's locks: it stays, with the occurrences that write adds (one that
 *    only took a suggestion from it adds none: that signature is left without occurrences, listed, until its failure
 *    comes again; it takes the two at the same moment).
 */
export async function recountSignatures(
  tx: EntityManager,
  failures: readonly DeletedFailures[],
): Promise<void> {
  if (!failures.length) {
    return;
  }
  const signatureIds = failures.map((f) => f.signatureId);
  const testIds = failures.map((f) => f.testId);
  const runIds = failures.map((f) => f.runId);
  const counts = failures.map((f) => f.count);
  // 1. The tests' link rows.
  await tx.query(
    `SELECT 1 FROM failure_signature_tests l
      WHERE (l.signature_id, l.test_id) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))
      ORDER BY l.signature_id, l.test_id FOR UPDATE`,
    [signatureIds, testIds],
  );
  const testsGone = await takeAway(tx, 'failure_signature_tests', 'test_id', signatureIds, testIds, counts);
  // 2. The runs' link rows.
  const runsGone = await takeAway(tx, 'failure_signature_runs', 'run_id', signatureIds, runIds, counts);
  const goneRuns = new Map(runsGone.map((r) => [String(r.signature_id), new Set(r.gone.map(String))]));
  // 3. The signatures: what each lost.
  const lost = new Map<string, { occurrences: number; tests: number; runs: number }>();
  const of = (id: string) => {
    let l = lost.get(id);
    if (!l) {
      l = { occurrences: 0, tests: 0, runs: 0 };
      lost.set(id, l);
    }
    return l;
  };
  failures.forEach((f) => (of(f.signatureId).occurrences += f.count));
  testsGone.forEach((r) => (of(String(r.signature_id)).tests += r.n));
  runsGone.forEach((r) => (of(String(r.signature_id)).runs += r.n));
  const ids = [...lost.keys()];
  const lostArgs = [
    ids,
    ids.map((id) => lost.get(id)!.occurrences),
    ids.map((id) => lost.get(id)!.tests),
    ids.map((id) => lost.get(id)!.runs),
  ];
  // Locked in id order with the signatures suggested from one about to be left without occurrences (occurrences
  // only grow meanwhile: those that reach none below are among these).
  const held: { id: string; first_run_id: string; last_run_id: string }[] = await tx.query(
    `SELECT id, first_run_id, last_run_id FROM failure_signatures
      WHERE id = ANY(ARRAY(
              SELECT unnest($1::bigint[])
               UNION
              SELECT n.id FROM unnest($1::bigint[], $2::bigint[]) AS u(id, occurrences)
                JOIN failure_signatures s ON s.id = u.id AND s.occurrences <= u.occurrences
                JOIN failure_signatures n ON n.suggested_from_id = s.id))
      ORDER BY id FOR NO KEY UPDATE`,
    lostArgs.slice(0, 2),
  );
  // First and last seen are read again only where the run they name lost its link row (the others stay the least
  // and the greatest of the run links left): retention deletes the oldest runs, seldom a signature's last.
  const ends = new Map(held.map((h) => [String(h.id), h]));
  const rereads = (end: 'first_run_id' | 'last_run_id') =>
    ids.map((id) => goneRuns.get(id)?.has(String(ends.get(id)?.[end])) ?? false);
  const [recounted]: [{ id: string; occurrences: string }[], number] = await tx.query(
    `UPDATE failure_signatures s
        SET occurrences = s.occurrences - u.occurrences, tests = s.tests - u.tests, runs = s.runs - u.runs,
            first_run_id = coalesce(f.run_id, s.first_run_id), first_seen_at = coalesce(f.started_at, s.first_seen_at),
            last_run_id = coalesce(l.run_id, s.last_run_id), last_seen_at = coalesce(l.started_at, s.last_seen_at)
       FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::int[], $5::boolean[], $6::boolean[])
              AS u(id, occurrences, tests, runs, first_gone, last_gone)
       LEFT JOIN LATERAL (
         SELECT run_id, started_at FROM failure_signature_runs
          WHERE signature_id = u.id AND u.first_gone ORDER BY started_at, run_id LIMIT 1) f ON true
       LEFT JOIN LATERAL (
         SELECT run_id, started_at FROM failure_signature_runs
          WHERE signature_id = u.id AND u.last_gone ORDER BY started_at DESC, run_id DESC LIMIT 1) l ON true
      WHERE s.id = u.id
      RETURNING s.id, s.occurrences`,
    [...lostArgs, rereads('first_run_id'), rereads('last_run_id')],
  );
  const emptied = recounted.filter((r) => Number(r.occurrences) <= 0).map((r) => String(r.id));
  if (!emptied.length) {
    return;
  }
  // 4. The signatures left without occurrences.
  const doomed: { id: string }[] = await tx.query(
    `SELECT id FROM failure_signatures WHERE id = ANY($1::bigint[]) AND occurrences <= 0
      ORDER BY id FOR UPDATE SKIP LOCKED`,
    [emptied],
  );
  if (!doomed.length) {
    return;
  }
  const doomedIds = doomed.map((r) => String(r.id));
  await tx.query(
    `UPDATE failure_signatures SET suggested_from_id = NULL, suggested_similarity = NULL
      WHERE suggested_from_id = ANY($1::bigint[])`,
    [doomedIds],
  );
  await tx.query('DELETE FROM failure_signatures WHERE id = ANY($1::bigint[])', [doomedIds]);
}

/**
 * The link rows (`table`: by signature and `column`, a test or a run) lose `counts` of their occurrences, summed by
 * key, and go when none is left; answers how many went, and which (their `column`), by signature.
 */
async function takeAway(
  tx: EntityManager,
  table: 'failure_signature_tests' | 'failure_signature_runs',
  column: 'test_id' | 'run_id',
  signatureIds: readonly string[],
  keys: readonly string[],
  counts: readonly number[],
): Promise<{ signature_id: string; n: number; gone: string[] }[]> {
  return tx.query(
    `WITH u AS (
       SELECT signature_id, ${column}, sum(n)::int AS n
         FROM unnest($1::bigint[], $2::bigint[], $3::int[]) AS u(signature_id, ${column}, n)
        GROUP BY signature_id, ${column}),
     gone AS (
       DELETE FROM ${table} l USING u
        WHERE l.signature_id = u.signature_id AND l.${column} = u.${column} AND l.occurrences <= u.n
       RETURNING l.signature_id, l.${column} AS key),
     kept AS (
       UPDATE ${table} l SET occurrences = l.occurrences - u.n FROM u
        WHERE l.signature_id = u.signature_id AND l.${column} = u.${column} AND l.occurrences > u.n)
     SELECT signature_id, count(*)::int AS n, array_agg(key) AS gone FROM gone GROUP BY signature_id`,
    [signatureIds, keys, counts],
  );
}
