import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type PageRequest, withWindowTotal } from '../common/paging/page.js';
import { containing } from '../results/runs.repository.js';
import type { ResultFailure } from '../results/result-failures.js';
import type { Triage } from './dto/failure.dto.js';

export type FailureSortField = 'lastSeen' | 'occurrences' | 'firstSeen';

const SORT_COLUMN: Record<FailureSortField, string> = {
  lastSeen: 's.last_seen_at',
  occurrences: 's.occurrences',
  firstSeen: 's.first_seen_at',
};

export interface SignatureRow {
  id: string;
  project_id: string;
  key: string;
  sample_message: string | null;
  first_run_id: string;
  first_seen_at: Date;
  last_run_id: string;
  last_seen_at: Date;
  occurrences: string;
  tests: number;
  runs: number;
  triage: Triage;
  issue_url: string | null;
  issue_key: string | null;
  issue_title: string | null;
  note: string | null;
  assignee_id: string | null;
  assignee_email: string | null;
  assignee_full_name: string | null;
  suggested_from_id: string | null;
  suggested_similarity: number | null;
}

export interface FailureFilter {
  /** Words, each of which must appear in the sample message or the key. */
  words?: string[];
  triage?: Triage[];
  assigneeId?: string;
  /** Only signatures first seen in this run. */
  firstRunId?: string;
}

export interface SignatureChange {
  triage?: Triage;
  issue?: { url: string; key?: string; title?: string } | null;
  note?: string | null;
  assigneeId?: string | null;
}

/**
 * Up to 10 signatures of project $1 whose keys are most similar to key $2 (but signature $3), most similar first:
 * the 10 nearest by the trigram GiST index of keys (`<->`, walked nearest first: ~10 ms where a `%` search of keys
 * that share much, as a project's do, rechecked thousands), of them those at least 0.3 alike (pg_trgm's threshold).
 */
export const SIMILAR_SQL = `SELECT p.*, u.email AS assignee_email, u.full_name AS assignee_full_name FROM (
    SELECT s.*, similarity(s.key, $2) AS similarity FROM failure_signatures s
     WHERE s.project_id = $1 AND s.id <> $3
     ORDER BY s.key <-> $2 LIMIT 10) p
  LEFT JOIN users u ON u.id = p.assignee_id
  WHERE p.similarity >= 0.3
  ORDER BY p.similarity DESC, p.id`;

/**
 * A page of the project's signatures, with its total as a window count. Words go to the trigram index of `search`
 * (the sample message and the key in lower case; LIKE, each word); the other filters and the sort narrow and order what they find,
 * or the project's signatures.
 */
export function listQuery(
  projectId: string,
  filter: FailureFilter,
  page: PageRequest<FailureSortField>,
): { sql: string; params: unknown[]; countSql: string; countParams: unknown[] } {
  const params: unknown[] = [projectId];
  const where = ['s.project_id = $1'];
  for (const word of filter.words ?? []) {
    params.push(containing(word.toLowerCase()));
    where.push(`s.search LIKE $${params.length}`);
  }
  if (filter.triage?.length) {
    params.push(filter.triage);
    where.push(`s.triage = ANY($${params.length}::varchar[])`);
  }
  if (filter.assigneeId !== undefined) {
    params.push(filter.assigneeId);
    where.push(`s.assignee_id = $${params.length}`);
  }
  if (filter.firstRunId !== undefined) {
    params.push(filter.firstRunId);
    where.push(`s.first_run_id = $${params.length}`);
  }
  const countParams = [...params];
  const order = page.sort.map((s) => `${SORT_COLUMN[s.field]} ${s.direction}`).join(', ');
  params.push(page.size, page.offset);
  return {
    sql: `SELECT p.*, u.email AS assignee_email, u.full_name AS assignee_full_name FROM (
         SELECT s.*, count(*) OVER () AS n FROM failure_signatures s
          WHERE ${where.join(' AND ')}
          ORDER BY ${order}, s.id DESC
          LIMIT $${params.length - 1} OFFSET $${params.length}) p
       LEFT JOIN users u ON u.id = p.assignee_id
       ORDER BY ${order.replace(/\bs\./g, 'p.')}, p.id DESC`,
    params,
    countSql: `SELECT count(*) AS n FROM failure_signatures s WHERE ${where.join(' AND ')}`,
    countParams,
  };
}

const SIGNATURE_SQL = `SELECT s.*, u.email AS assignee_email, u.full_name AS assignee_full_name
  FROM failure_signatures s LEFT JOIN users u ON u.id = s.assignee_id`;

/** Reads and triage of failure signatures (their write path is signatures.writer.ts). */
@Injectable()
export class SignaturesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async projectOf(id: string): Promise<string | null> {
    const rows: { project_id: string }[] = await this.db.query(
      'SELECT project_id FROM failure_signatures WHERE id = $1',
      [id],
    );
    return rows[0] ? String(rows[0].project_id) : null;
  }

  async find(id: string): Promise<SignatureRow | null> {
    const rows: SignatureRow[] = await this.db.query(`${SIGNATURE_SQL} WHERE s.id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** A page of the project's signatures (see listQuery). */
  async list(
    projectId: string,
    filter: FailureFilter,
    page: PageRequest<FailureSortField>,
  ): Promise<[SignatureRow[], number]> {
    const { sql, params, countSql, countParams } = listQuery(projectId, filter, page);
    const rows: (SignatureRow & { n: string })[] = await this.db.query(sql, params);
    return withWindowTotal(rows, page, async () => {
      const [{ n }]: { n: string }[] = await this.db.query(countSql, countParams);
      return Number(n);
    });
  }

  /** The last 20 runs the signature appeared in, latest first, with its failing results in each. */
  async recentRuns(
    id: string,
  ): Promise<{ run_id: string; name: string; started_at: Date; occurrences: number }[]> {
    return this.db.query(
      `SELECT l.run_id, r.name, r.started_at, l.occurrences FROM failure_signature_runs l
         JOIN runs r ON r.id = l.run_id
        WHERE l.signature_id = $1
        ORDER BY r.started_at DESC, r.id DESC LIMIT 20`,
      [id],
    );
  }

  /** The 50 tests the signature appeared in most. */
  async topTests(
    id: string,
  ): Promise<{ test_id: string; suite: string; name: string; occurrences: number }[]> {
    return this.db.query(
      `SELECT l.test_id, t.suite, t.name, l.occurrences FROM failure_signature_tests l
         JOIN test_cases t ON t.id = l.test_id
        WHERE l.signature_id = $1
        ORDER BY l.occurrences DESC, l.test_id LIMIT 50`,
      [id],
    );
  }

  /**
   * The signatures first seen in the run (new in it), by id, the first `max` of them and how many there are: by the
   * run's failing results (failure_results' key), then each signature by its id.
   */
  async newInRun(runId: string, max: number): Promise<[SignatureRow[], number]> {
    const rows: (SignatureRow & { n: string })[] = await this.db.query(
      `WITH ids AS (SELECT DISTINCT signature_id FROM failure_results WHERE run_id = $1)
       SELECT s.*, u.email AS assignee_email, u.full_name AS assignee_full_name, count(*) OVER () AS n
         FROM ids JOIN failure_signatures s ON s.id = ids.signature_id
         LEFT JOIN users u ON u.id = s.assignee_id
        WHERE s.first_run_id = $1
        ORDER BY s.id LIMIT $2`,
      [runId, max],
    );
    return [rows, rows.length ? Number(rows[0].n) : 0];
  }

  /**
   * The tests the signature appeared in (its link rows, by their key), or undefined when there are more than `max`.
   */
  async testsOf(id: string, max: number): Promise<string[] | undefined> {
    const rows: { test_id: string }[] = await this.db.query(
      'SELECT test_id FROM failure_signature_tests WHERE signature_id = $1 LIMIT $2',
      [id, max + 1],
    );
    return rows.length > max ? undefined : rows.map((r) => String(r.test_id));
  }

  /**
   * Up to 10 signatures of the project whose keys are most similar to this one's: the trigram index of keys finds
   * those above pg_trgm's similarity threshold (0.3, its default), ordered by similarity.
   */
  async similar(signature: SignatureRow): Promise<(SignatureRow & { similarity: number })[]> {
    return this.db.query(SIMILAR_SQL, [signature.project_id, signature.key, signature.id]);
  }

  /** Applies a person's triage: the signature is no suggestion any more. */
  async change(id: string, change: SignatureChange): Promise<void> {
    const sets = ['suggested_from_id = NULL', 'suggested_similarity = NULL', 'updated_at = now()'];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (change.triage !== undefined) {
      set('triage', change.triage);
    }
    if (change.issue !== undefined) {
      set('issue_url', change.issue?.url ?? null);
      set('issue_key', change.issue?.key ?? null);
      set('issue_title', change.issue?.title ?? null);
    }
    if (change.note !== undefined) {
      set('note', change.note);
    }
    if (change.assigneeId !== undefined) {
      set('assignee_id', change.assigneeId);
    }
    await this.db.query(`UPDATE failure_signatures SET ${sets.join(', ')} WHERE id = $1`, params);
  }

  /** The signatures of these results of the run (failing ones have one), by result id: by failure_results' key. */
  async ofResults(runId: string, resultIds: string[]): Promise<Map<string, ResultFailure>> {
    const rows: {
      result_id: string;
      id: string;
      first_run_id: string;
      triage: Triage;
      issue_url: string | null;
      issue_key: string | null;
      issue_title: string | null;
    }[] = await this.db.query(
      `SELECT f.result_id, s.id, s.first_run_id, s.triage, s.issue_url, s.issue_key, s.issue_title
         FROM failure_results f JOIN failure_signatures s ON s.id = f.signature_id
        WHERE f.run_id = $1 AND f.result_id = ANY($2::bigint[])`,
      [runId, resultIds],
    );
    return new Map(
      rows.map((r) => [
        String(r.result_id),
        {
          signatureId: Number(r.id),
          isNew: String(r.first_run_id) === String(runId),
          triage: r.triage,
          issue: issueOf(r),
        },
      ]),
    );
  }
}

export function issueOf(r: {
  issue_url: string | null;
  issue_key: string | null;
  issue_title: string | null;
}): { url: string; key?: string; title?: string } | null {
  if (r.issue_url === null) {
    return null;
  }
  return {
    url: r.issue_url,
    ...(r.issue_key !== null ? { key: r.issue_key } : {}),
    ...(r.issue_title !== null ? { title: r.issue_title } : {}),
  };
}
