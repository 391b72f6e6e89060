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
/** How often a write looks its signatures up again when the purge deleted some of them meanwhile. */
const MAX_TRIES = 5;

interface KeyTally {
  sample: string | null;
  occurrences: number;
  resultIds: string[];
  tests: Map<string, number>;
}

/**
 * The failures of one write (a V1/V2 batch, or a whole imported run), gathered by key and stored in one go: new
 * signatures inserted in key order, each failing result's signature (failure_results, which the run's groups read),
 * the tests' link rows, and last, under the signatures' row locks taken in id order (held to the commit, as
 * concurrent writes of the same failures meet there), the run's link rows and the signatures' counts, first and
 * last seen. A link row a write adds raises its signature's `runs` or `tests`; nothing is counted again from results.
 * The purge of deleted runs takes away what their results added, the same way (signatures-recount.ts).
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
    const sampleOf = new Map(keys.map((k, i) => [k, tallies[i].sample]));
    // 1. The signatures' ids, new ones inserted (in key order) with nothing counted yet. DO NOTHING takes no lock
    // on a signature that exists: concurrent writers of the same failures do not wait for each other here. Those
    // that exist are read FOR KEY SHARE, as the link rows' foreign keys would lock them below: one the purge is
    // deleting (left without occurrences, signatures-recount.ts) is waited for and then not found, and inserted
    // anew, where the link rows' insert would have failed on its foreign key.
    const created: { id: string; key: string }[] = [];
    const idOf = new Map<string, string>();
    let pending = keys;
    for (let tries = 1; pending.length; tries++) {
      const inserted: { id: string; key: string }[] = await tx.query(
        `INSERT INTO failure_signatures
                (project_id, key, sample_message, first_run_id, first_seen_at, last_run_id, last_seen_at, occurrences)
         SELECT $1, k.key, k.sample, r.id, r.started_at, r.id, r.started_at, 0
           FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS k(key, sample, i)
          CROSS JOIN (SELECT id, started_at FROM runs WHERE id = $2) r
          ORDER BY k.i
         ON CONFLICT (project_id, key) DO NOTHING
         RETURNING id, key`,
        [projectId, runId, pending, pending.map((k) => sampleOf.get(k)!)],
      );
      created.push(...inserted);
      inserted.forEach((r) => idOf.set(r.key, String(r.id)));
      const existing = pending.filter((k) => !idOf.has(k));
      if (existing.length) {
        const known: { id: string; key: string }[] = await tx.query(
          `SELECT s.id, s.key FROM unnest($2::text[]) AS k(key)
             CROSS JOIN LATERAL (
               SELECT id, key FROM failure_signatures WHERE project_id = $1 AND key = k.key FOR KEY SHARE) s`,
          [projectId, existing],
        );
        known.forEach((r) => idOf.set(r.key, String(r.id)));
      }
      pending = existing.filter((k) => !idOf.has(k));
      if (pending.length && tries >= MAX_TRIES) {
        throw new Error(`${pending.length} failure signatures kept being deleted under this write`);
      }
    }
    const signatureIds = keys.map((key) => idOf.get(key)!);
    const resultIds: string[] = [];
    const resultSignatures: string[] = [];
    const testSignatures: string[] = [];
    const testIds: string[] = [];
    const testCounts: number[] = [];
    keys.forEach((_, k) => {
      for (const resultId of tallies[k].resultIds) {
        resultIds.push(resultId);
        resultSignatures.push(signatureIds[k]);
      }
      for (const [testId, n] of tallies[k].tests) {
        testSignatures.push(signatureIds[k]);
        testIds.push(testId);
        testCounts.push(n);
      }
    });
    // 2. What only this write touches: its failing results' signatures, and its tests' link rows (a test is written
    // by one batch at a time), with how many of those are new to each signature.
    const addedTests: { signature_id: string; n: number }[] = await tx.query(
      `WITH fr AS (
         INSERT INTO failure_results (run_id, result_id, signature_id)
         SELECT $1, u.result_id, u.signature_id FROM unnest($2::bigint[], $3::bigint[]) AS u(result_id, signature_id)),
       st AS (
         INSERT INTO failure_signature_tests AS l (signature_id, test_id, occurrences)
         SELECT u.signature_id, u.test_id, u.n FROM unnest($4::bigint[], $5::bigint[], $6::int[]) AS u(signature_id, test_id, n)
         ORDER BY 1, 2
         ON CONFLICT (signature_id, test_id) DO UPDATE SET occurrences = l.occurrences + excluded.occurrences
         RETURNING signature_id, (xmax = 0) AS added)
       SELECT signature_id, count(*)::int AS n FROM st WHERE added GROUP BY signature_id`,
      [runId, resultIds, resultSignatures, testSignatures, testIds, testCounts],
    );
    const newTests = new Map(addedTests.map((r) => [String(r.signature_id), r.n]));
    // 3. Shared with concurrent writes of the same failures, so last and short: the signatures row-locked in id order
    // (no two writers can lock them crosswise), then their run's link rows and their counts, first and last seen (a
    // signature in no run yet, new or one the purge left empty while this write held it, takes this run's).
    // NO KEY UPDATE, as the UPDATE takes: the link rows written above hold KEY SHARE locks on their signatures
    // (their foreign keys), which FOR UPDATE would wait for, one writer for another's and back (a deadlock).
    const order = signatureIds.map((_, k) => k).sort((x, y) => compareIds(signatureIds[x], signatureIds[y]));
    const sorted = order.map((k) => signatureIds[k]);
    await tx.query(
      `SELECT 1 FROM failure_signatures WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE`,
      [sorted],
    );
    await tx.query(
      `WITH r AS (SELECT id, started_at FROM runs WHERE id = $1),
       sr AS (
         INSERT INTO failure_signature_runs AS l (signature_id, run_id, occurrences, started_at)
         SELECT u.signature_id, r.id, u.n, r.started_at FROM unnest($2::bigint[], $3::int[]) AS u(signature_id, n)
          CROSS JOIN r
         ON CONFLICT (signature_id, run_id) DO UPDATE SET occurrences = l.occurrences + excluded.occurrences
         RETURNING signature_id, (xmax = 0) AS added)
       UPDATE failure_signatures s
          SET occurrences = s.occurrences + u.n, tests = s.tests + u.tests, runs = s.runs + sr.added::int,
              first_run_id = CASE WHEN s.runs = 0 OR r.started_at < s.first_seen_at THEN r.id ELSE s.first_run_id END,
              first_seen_at = CASE WHEN s.runs = 0 THEN r.started_at ELSE least(s.first_seen_at, r.started_at) END,
              last_run_id = CASE WHEN s.runs = 0 OR r.started_at >= s.last_seen_at THEN r.id ELSE s.last_run_id END,
              last_seen_at = CASE WHEN s.runs = 0 THEN r.started_at ELSE greatest(s.last_seen_at, r.started_at) END
         FROM unnest($2::bigint[], $3::int[], $4::int[]) AS u(signature_id, n, tests)
         JOIN sr ON sr.signature_id = u.signature_id
        CROSS JOIN r
        WHERE s.id = u.signature_id`,
      [runId, sorted, order.map((k) => tallies[k].occurrences), sorted.map((id) => newTests.get(id) ?? 0)],
    );
    return created.map((r) => String(r.id));
  }
}

function compareIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Suggestions for the signatures a write created (API.md): each takes the triage and issue of the most similar
 * signature of the project that a person triaged (a triage other than TO_INVESTIGATE, or an issue; not itself a
 * suggestion) when the trigram similarity of their keys is at least the project's `triage.similarity`. One
 * statement for all of them, each probing the trigram index of keys (`%`, at that threshold for this transaction).
 * The signature a suggestion comes from is read FOR KEY SHARE, as the foreign key of suggested_from_id would lock it:
 * one the purge is deleting is waited for and passed over, where the update would have failed on the foreign key.
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
                 LIMIT 1 FOR KEY SHARE OF s) b
             WHERE c.id = ANY($2::bigint[])) m
      WHERE n.id = m.new_id AND m.sim >= $3::real`,
    [projectId, created, threshold],
  );
}
