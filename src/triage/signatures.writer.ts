import type { EntityManager } from 'typeorm';
import { DEFAULT_SETTINGS } from '../common/project-settings.js';

/** One failing result (FAILED or BROKEN) with its signature key (failure-signature.ts). */
export interface Failure {
  resultId: string;
  testId: string;
  key: string;
  message: string | null;
}

/** What the sample message of a signature keeps of the first message that made it. */
const SAMPLE_CHARS = 2000;
/** Rows a statement takes at once when a whole run (an import) is stored at its finish. */
const CHUNK = 5_000;

interface KeyTally {
  sample: string | null;
  occurrences: number;
  resultIds: string[];
  tests: Map<string, number>;
}

/**
 * The failures of one write (a V1/V2 batch, or a whole imported run), gathered by key and stored in one go: the
 * signatures upserted in key order (so two writers cannot deadlock on them; the rows stay locked to the commit), each
 * failing result's signature (failure_results, which the run's groups read), and each signature's distinct runs and
 * tests through their link tables, whose new rows alone raise the signature's `runs` and `tests`. Nothing is counted
 * again from the results.
 *
 * Occurrences count failing results as stored, attempts included (a test that failed, then passed on retry, met
 * the failure once): the number only grows with writes, as a late retry does not undo the failure that happened. The
 * run's failure groups read outcomes, as before, through failure_results.
 */
export class PendingFailures {
  private readonly keys = new Map<string, KeyTally>();

  get size(): number {
    return this.keys.size;
  }

  add(failures: readonly Failure[]): void {
    for (const f of failures) {
      let tally = this.keys.get(f.key);
      if (!tally) {
        tally = {
          sample: f.message === null ? null : f.message.slice(0, SAMPLE_CHARS),
          occurrences: 0,
          resultIds: [],
          tests: new Map(),
        };
        this.keys.set(f.key, tally);
      }
      tally.occurrences++;
      tally.resultIds.push(f.resultId);
      tally.tests.set(f.testId, (tally.tests.get(f.testId) ?? 0) + 1);
    }
  }

  /** Stores them in `tx` for the run; the ids of the signatures this write created. */
  async store(tx: Pick<EntityManager, 'query'>, projectId: string, runId: string): Promise<string[]> {
    // Code-unit order, the same in every writer: the order the rows are locked in.
    const keys = [...this.keys.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const created: string[] = [];
    for (let i = 0; i < keys.length; i += CHUNK) {
      created.push(...(await this.storeKeys(tx, projectId, runId, keys.slice(i, i + CHUNK))));
    }
    this.keys.clear();
    return created;
  }

  private async storeKeys(
    tx: Pick<EntityManager, 'query'>,
    projectId: string,
    runId: string,
    keys: string[],
  ): Promise<string[]> {
    const tallies = keys.map((k) => this.keys.get(k)!);
    // First and last seen go by the run's start (an import carries its report's), so a run written late does not
    // pass for the latest, nor an older one for the first.
    const rows: { id: string; key: string; created: boolean }[] = await tx.query(
      `INSERT INTO failure_signatures AS s
              (project_id, key, sample_message, first_run_id, first_seen_at, last_run_id, last_seen_at, occurrences)
       SELECT $1, k.key, k.sample, r.id, r.started_at, r.id, r.started_at, k.n
         FROM unnest($3::text[], $4::text[], $5::int[]) WITH ORDINALITY AS k(key, sample, n, i)
        CROSS JOIN (SELECT id, started_at FROM runs WHERE id = $2) r
        ORDER BY k.i
       ON CONFLICT (project_id, key) DO UPDATE SET
         occurrences = s.occurrences + excluded.occurrences,
         first_run_id = CASE WHEN excluded.first_seen_at < s.first_seen_at THEN excluded.first_run_id ELSE s.first_run_id END,
         first_seen_at = least(s.first_seen_at, excluded.first_seen_at),
         last_run_id = CASE WHEN excluded.last_seen_at >= s.last_seen_at THEN excluded.last_run_id ELSE s.last_run_id END,
         last_seen_at = greatest(s.last_seen_at, excluded.last_seen_at)
       RETURNING id, key, (xmax = 0) AS created`,
      [projectId, runId, keys, tallies.map((t) => t.sample), tallies.map((t) => t.occurrences)],
    );
    const idOf = new Map(rows.map((r) => [r.key, String(r.id)]));
    const resultIds: string[] = [];
    const resultSignatures: string[] = [];
    const testSignatures: string[] = [];
    const testIds: string[] = [];
    const testCounts: number[] = [];
    keys.forEach((key, k) => {
      const id = idOf.get(key)!;
      for (const resultId of tallies[k].resultIds) {
        resultIds.push(resultId);
        resultSignatures.push(id);
      }
      for (const [testId, n] of tallies[k].tests) {
        testSignatures.push(id);
        testIds.push(testId);
        testCounts.push(n);
      }
    });
    const signatureIds = keys.map((key) => idOf.get(key)!);
    // The link rows of a signature are written under its row lock (taken above), so they need no order of their
    // own; the signature's counts take the link rows this write added.
    await tx.query(
      `WITH fr AS (
         INSERT INTO failure_results (run_id, result_id, signature_id)
         SELECT $1, u.result_id, u.signature_id FROM unnest($2::bigint[], $3::bigint[]) AS u(result_id, signature_id)),
       sr AS (
         INSERT INTO failure_signature_runs AS l (signature_id, run_id, occurrences)
         SELECT u.signature_id, $1, u.n FROM unnest($4::bigint[], $5::int[]) AS u(signature_id, n)
         ON CONFLICT (signature_id, run_id) DO UPDATE SET occurrences = l.occurrences + excluded.occurrences
         RETURNING signature_id, (xmax = 0) AS added),
       st AS (
         INSERT INTO failure_signature_tests AS l (signature_id, test_id, occurrences)
         SELECT u.signature_id, u.test_id, u.n FROM unnest($6::bigint[], $7::bigint[], $8::int[]) AS u(signature_id, test_id, n)
         ON CONFLICT (signature_id, test_id) DO UPDATE SET occurrences = l.occurrences + excluded.occurrences
         RETURNING signature_id, (xmax = 0) AS added),
       d AS (
         SELECT signature_id, sum(runs)::int AS runs, sum(tests)::int AS tests FROM (
           SELECT signature_id, added::int AS runs, 0 AS tests FROM sr
           UNION ALL SELECT signature_id, 0, added::int FROM st) x
          GROUP BY signature_id)
       UPDATE failure_signatures s SET runs = s.runs + d.runs, tests = s.tests + d.tests
         FROM d WHERE s.id = d.signature_id AND (d.runs > 0 OR d.tests > 0)`,
      [
        runId,
        resultIds,
        resultSignatures,
        signatureIds,
        tallies.map((t) => t.occurrences),
        testSignatures,
        testIds,
        testCounts,
      ],
    );
    return rows.filter((r) => r.created).map((r) => String(r.id));
  }
}

/**
 * Suggestions for the signatures a write created (API.md): each takes the triage and issue of the most similar
 * signature of the project that a person triaged (a triage other than TO_INVESTIGATE, or an issue; not itself a
 * suggestion) when the trigram similarity of their keys is at least the project's `triage.similarity`. One
 * statement for all of them, each probing the trigram index of keys (`%`, at that threshold for this transaction).
 */
export async function suggestFor(
  tx: Pick<EntityManager, 'query'>,
  projectId: string,
  created: string[],
): Promise<void> {
  if (!created.length) {
    return;
  }
  const [{ threshold }]: { threshold: string }[] = await tx.query(
    `SELECT set_config('pg_trgm.similarity_threshold',
              coalesce((SELECT settings #>> '{triage,similarity}' FROM projects WHERE id = $1), $2), true) AS threshold`,
    [projectId, String(DEFAULT_SETTINGS.triage.similarity)],
  );
  await tx.query(
    `UPDATE failure_signatures n
        SET triage = m.triage, issue_url = m.issue_url, issue_key = m.issue_key, issue_title = m.issue_title,
            suggested_from_id = m.id, suggested_similarity = m.sim
       FROM (SELECT c.id AS new_id, b.* FROM failure_signatures c
              CROSS JOIN LATERAL (
                SELECT s.id, s.triage, s.issue_url, s.issue_key, s.issue_title, similarity(s.key, c.key) AS sim
                  FROM failure_signatures s
                 WHERE s.project_id = $1 AND s.key % c.key AND s.id <> c.id AND s.suggested_from_id IS NULL
                   AND (s.triage <> 'TO_INVESTIGATE' OR s.issue_url IS NOT NULL)
                 ORDER BY sim DESC, s.id
                 LIMIT 1) b
             WHERE c.id = ANY($2::bigint[])) m
      WHERE n.id = m.new_id AND m.sim >= $3::real`,
    [projectId, created, threshold],
  );
}
