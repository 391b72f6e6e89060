import type { EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { DEFAULT_SETTINGS } from '../common/project-settings.js';
import { queryPrepared } from '../database/prepared.js';

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
 * The failures of one write (a V1/V2 batch, or a whole imported run), gathered by key and stored in one go: in one
 * statement when the replica knows their signatures' ids (SignatureIdCache), else after a lookup of the ids (new
 * signatures inserted in key order). The statement stores each failing result's signature (failure_results, which
 * the run's groups read), the tests' link rows, and last, under the signatures' row locks taken in id order (held to
 * the commit, as concurrent writes of the same failures meet there), the run's link rows and the signatures' counts,
 * first and last seen (writeFailures). A link row a write adds raises its signature's `runs` or `tests`; nothing is
 * counted again from results. The purge of deleted runs takes away what their results added, the same way
 * (signatures-recount.ts).
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
  async store(
    tx: Pick<EntityManager, 'query'>,
    projectId: string,
    runId: string,
    cache?: SignatureIdCache,
  ): Promise<string[]> {
    // Code-unit order, the same in every writer: the order the rows are locked in.
    const keys = [...this.keys.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const created: string[] = [];
    for (let i = 0; i < keys.length; i += CHUNK) {
      created.push(...(await this.storeKeys(tx, projectId, runId, keys.slice(i, i + CHUNK), cache)));
    }
    this.keys.clear();
    return created;
  }

  private async storeKeys(
    tx: Pick<EntityManager, 'query'>,
    projectId: string,
    runId: string,
    keys: string[],
    cache: SignatureIdCache | undefined,
  ): Promise<string[]> {
    const tallies = keys.map((k) => this.keys.get(k)!);
    // A rerun's failures are known ones: their ids from the cache, checked by the write itself.
    const cached = cache ? keys.map((key) => cache.get(projectId, key)) : [];
    if (cache && cached.every((id) => id !== undefined)) {
      if (await writeFailures(tx, runId, cached, tallies)) {
        return [];
      }
      // One of them is gone (the purge deleted it): looked up, or made anew.
      cache.forget(projectId, keys);
    }
    const { idOf, created } = await signatureIds(tx, projectId, runId, keys, tallies);
    const ids = keys.map((key) => idOf.get(key)!);
    keys.forEach((key, k) => cache?.set(projectId, key, ids[k]));
    // Held FOR KEY SHARE since they were looked up or made: none can have gone.
    if (!(await writeFailures(tx, runId, ids, tallies))) {
      throw new Error('failure signatures were deleted under the write that holds them');
    }
    return created;
  }
}

/**
 * Signature ids by project and key, from earlier writes, so that a rerun's known failures cost no look-up: safe to
 * keep, as the write that uses them checks them (writeFailures) and looks them up again when one is gone; an id is
 * never given to another signature. Two generations bound the memory: when the young one is full, it becomes the
 * old one.
 */
export class SignatureIdCache {
  private young = new Map<string, string>();
  private old = new Map<string, string>();

  constructor(private readonly capacity: number) {}

  get(projectId: string, key: string): string | undefined {
    const k = `${projectId}:${key}`;
    const id = this.young.get(k);
    if (id !== undefined) {
      return id;
    }
    const aged = this.old.get(k);
    if (aged !== undefined) {
      this.put(k, aged);
    }
    return aged;
  }

  set(projectId: string, key: string, id: string): void {
    this.put(`${projectId}:${key}`, id);
  }

  forget(projectId: string, keys: readonly string[]): void {
    for (const key of keys) {
      this.young.delete(`${projectId}:${key}`);
      this.old.delete(`${projectId}:${key}`);
    }
  }

  private put(k: string, id: string): void {
    if (this.young.size >= this.capacity && !this.young.has(k)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(k, id);
  }
}

/**
 * Stores the failures of `keys` (their tallies) under the signatures `ids`, in one statement: false, and nothing
 * stored, when one of those signatures is not there any more (a cached id of one the purge deleted). Its steps, in
 * this order (the order of the row locks it takes, as in signatures-recount.ts):
 * 1. The signatures held FOR KEY SHARE (as the link rows' foreign keys would lock them): one the purge is deleting
 *    is waited for and then not found, and the statement stores nothing. The purge passes over those held.
 * 2. What only this write touches: its failing results' signatures (fr), and its tests' link rows (st, in
 *    (signature, test) order; a test is written by one batch at a time), with how many of those are new to each
 *    signature.
 * 3. Shared with concurrent writes of the same failures, so last: the signatures row-locked in id order (no two
 *    writers can lock them crosswise), then their run's link rows and their counts, first and last seen (a
 *    signature in no run yet, new or one the purge left empty while this write held it, takes this run's).
 *    `locked` reads st whole (its count, an init plan run before the first signature is locked), so that the link
 *    rows are always locked before the signatures, whatever plan the statement gets. NO KEY UPDATE, as the UPDATE
 *    takes: the link rows hold KEY SHARE locks on their signatures, which FOR UPDATE would wait for, one writer for
 *    another's and back (a deadlock).
 */
async function writeFailures(
  tx: Pick<EntityManager, 'query'>,
  runId: string,
  ids: readonly string[],
  tallies: readonly KeyTally[],
): Promise<boolean> {
  const resultIds: string[] = [];
  const resultSignatures: string[] = [];
  const testSignatures: string[] = [];
  const testIds: string[] = [];
  const testCounts: number[] = [];
  tallies.forEach((tally, k) => {
    for (const resultId of tally.resultIds) {
      resultIds.push(resultId);
      resultSignatures.push(ids[k]);
    }
    for (const [testId, n] of tally.tests) {
      testSignatures.push(ids[k]);
      testIds.push(testId);
      testCounts.push(n);
    }
  });
  const order = ids.map((_, k) => k).sort((x, y) => compareIds(ids[x], ids[y]));
  const sorted = order.map((k) => ids[k]);
  const [{ stored }] = await queryPrepared<{ stored: boolean }>(
    tx,
    'triage-store-failures',
    `WITH r AS (SELECT id, started_at FROM runs WHERE id = $1),
     held AS MATERIALIZED (SELECT id FROM failure_signatures WHERE id = ANY($7::bigint[]) FOR KEY SHARE),
     ok AS MATERIALIZED (SELECT count(*) = cardinality($7::bigint[]) AS stored FROM held),
     fr AS (
       INSERT INTO failure_results (run_id, result_id, signature_id)
       SELECT $1, u.result_id, u.signature_id FROM unnest($2::bigint[], $3::bigint[]) AS u(result_id, signature_id)
        WHERE (SELECT stored FROM ok)),
     st AS (
       INSERT INTO failure_signature_tests AS l (signature_id, test_id, occurrences)
       SELECT u.signature_id, u.test_id, u.n FROM unnest($4::bigint[], $5::bigint[], $6::int[]) AS u(signature_id, test_id, n)
        WHERE (SELECT stored FROM ok)
        ORDER BY 1, 2
       ON CONFLICT (signature_id, test_id) DO UPDATE SET occurrences = l.occurrences + excluded.occurrences
       RETURNING signature_id, (xmax = 0) AS added),
     locked AS MATERIALIZED (
       SELECT id FROM failure_signatures
        WHERE id = ANY($7::bigint[]) AND (SELECT count(*) FROM st) > 0
        ORDER BY id FOR NO KEY UPDATE),
     sr AS (
       INSERT INTO failure_signature_runs AS l (signature_id, run_id, occurrences, started_at)
       SELECT u.signature_id, r.id, u.n, r.started_at
         FROM unnest($7::bigint[], $8::int[]) AS u(signature_id, n)
         JOIN locked ON locked.id = u.signature_id
        CROSS JOIN r
       ON CONFLICT (signature_id, run_id) DO UPDATE SET occurrences = l.occurrences + excluded.occurrences
       RETURNING signature_id, (xmax = 0) AS added),
     counted AS (
       UPDATE failure_signatures s
          SET occurrences = s.occurrences + u.n, tests = s.tests + coalesce(nt.n, 0), runs = s.runs + sr.added::int,
              first_run_id = CASE WHEN s.runs = 0 OR r.started_at < s.first_seen_at THEN r.id ELSE s.first_run_id END,
              first_seen_at = CASE WHEN s.runs = 0 THEN r.started_at ELSE least(s.first_seen_at, r.started_at) END,
              last_run_id = CASE WHEN s.runs = 0 OR r.started_at >= s.last_seen_at THEN r.id ELSE s.last_run_id END,
              last_seen_at = CASE WHEN s.runs = 0 THEN r.started_at ELSE greatest(s.last_seen_at, r.started_at) END
         FROM unnest($7::bigint[], $8::int[]) AS u(signature_id, n)
         JOIN sr ON sr.signature_id = u.signature_id
         LEFT JOIN (SELECT signature_id, count(*) FILTER (WHERE added)::int AS n FROM st GROUP BY signature_id) nt
           ON nt.signature_id = u.signature_id
        CROSS JOIN r
        WHERE s.id = u.signature_id)
     SELECT stored FROM ok`,
    [
      runId,
      resultIds,
      resultSignatures,
      testSignatures,
      testIds,
      testCounts,
      sorted,
      order.map((k) => tallies[k].occurrences),
    ],
  );
  return stored;
}

/**
 * The signatures' ids by key, those not stored yet inserted (in key order) with nothing counted; and the ids this
 * write created. The keys are looked up first (a rerun's failures are known ones: one statement), FOR KEY SHARE, as
 * the link rows' foreign keys would lock them: one the purge is deleting (left without occurrences,
 * signatures-recount.ts) is waited for and then not found, and inserted anew, where the link rows' insert would have
 * failed on its foreign key. DO NOTHING takes no lock on a signature a concurrent writer inserted meanwhile: it is
 * found by the next look.
 */
async function signatureIds(
  tx: Pick<EntityManager, 'query'>,
  projectId: string,
  runId: string,
  keys: string[],
  tallies: KeyTally[],
): Promise<{ idOf: Map<string, string>; created: string[] }> {
  const sampleOf = new Map(keys.map((k, i) => [k, tallies[i].sample]));
  const created: string[] = [];
  const idOf = new Map<string, string>();
  let pending = keys;
  for (let tries = 1; ; tries++) {
    const known = await queryPrepared<{ id: string; key: string }>(
      tx,
      'triage-signature-ids',
      `SELECT s.id, s.key FROM unnest($2::text[]) AS k(key)
         CROSS JOIN LATERAL (
           SELECT id, key FROM failure_signatures WHERE project_id = $1 AND key = k.key FOR KEY SHARE) s`,
      [projectId, pending],
    );
    known.forEach((r) => idOf.set(r.key, String(r.id)));
    const missing = pending.filter((k) => !idOf.has(k));
    if (!missing.length) {
      return { idOf, created };
    }
    const inserted: { id: string; key: string }[] = await tx.query(
      `INSERT INTO failure_signatures
              (project_id, key, sample_message, first_run_id, first_seen_at, last_run_id, last_seen_at, occurrences)
       SELECT $1, k.key, k.sample, r.id, r.started_at, r.id, r.started_at, 0
         FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS k(key, sample, i)
        CROSS JOIN (SELECT id, started_at FROM runs WHERE id = $2) r
        ORDER BY k.i
       ON CONFLICT (project_id, key) DO NOTHING
       RETURNING id, key`,
      [projectId, runId, missing, missing.map((k) => sampleOf.get(k)!)],
    );
    inserted.forEach((r) => {
      idOf.set(r.key, String(r.id));
      created.push(String(r.id));
    });
    if (
      inserted.length < missing.length &&
      !(await tx.query('SELECT 1 FROM runs WHERE id = $1', [runId])).length
    ) {
      // Nothing is inserted for a run that is gone: deleted since the write began (its results have no foreign key
      // to hold it). The batch fails as one sent after the delete does.
      throw AppError.notFound(`Run ${runId} not found`);
    }
    pending = missing.filter((k) => !idOf.has(k));
    if (!pending.length) {
      return { idOf, created };
    }
    if (tries >= MAX_TRIES) {
      throw new Error(`${pending.length} failure signatures kept being deleted under this write`);
    }
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
