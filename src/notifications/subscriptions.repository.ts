import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export interface Subscription {
  runFailed: boolean;
  newFailures: boolean;
}

/** Whether user `u.id` still sees project `$1`: a direct member, through a group, or a platform admin. */
const SEES_PROJECT = `(u.admin
  OR EXISTS (SELECT 1 FROM project_members pm WHERE pm.project_id = $1 AND pm.user_id = u.id)
  OR EXISTS (SELECT 1 FROM group_bindings b JOIN group_members gm ON gm.group_id = b.group_id
              WHERE b.project_id = $1 AND gm.user_id = u.id))`;

/** Members' mail subscriptions, and the record of mails sent per run and member. */
@Injectable()
export class SubscriptionsRepository {
  constructor(private readonly db: DataSource) {}

  async get(projectId: string, userId: string): Promise<Subscription> {
    const [row]: Subscription[] = await this.db.query(
      `SELECT run_failed AS "runFailed", new_failures AS "newFailures" FROM notification_subscriptions
        WHERE project_id = $1 AND user_id = $2`,
      [projectId, userId],
    );
    return row ?? { runFailed: false, newFailures: false };
  }

  async put(projectId: string, userId: string, patch: Partial<Subscription>): Promise<Subscription> {
    const [row]: Subscription[] = await this.db.query(
      `INSERT INTO notification_subscriptions (project_id, user_id, run_failed, new_failures)
       VALUES ($1, $2, coalesce($3, false), coalesce($4, false))
       ON CONFLICT (project_id, user_id) DO UPDATE SET run_failed = coalesce($3, notification_subscriptions.run_failed),
              new_failures = coalesce($4, notification_subscriptions.new_failures), updated_at = now()
       RETURNING run_failed AS "runFailed", new_failures AS "newFailures"`,
      [projectId, userId, patch.runFailed ?? null, patch.newFailures ?? null],
    );
    return row;
  }

  /**
   * The members subscribed to `kind` who still see the project and have not had this kind of mail for this run:
   * each is recorded as mailed (in the caller's transaction), so one run mails each member at most once a kind.
   */
  async claimRecipients(
    tx: EntityManager,
    projectId: string,
    runId: string,
    kind: 'run-failed' | 'new-failures',
  ): Promise<{ email: string; fullName: string }[]> {
    const column = kind === 'run-failed' ? 'run_failed' : 'new_failures';
    return tx.query(
      `WITH wanted AS (
         SELECT u.id, u.email, u.full_name FROM notification_subscriptions s JOIN users u ON u.id = s.user_id
          WHERE s.project_id = $1 AND s.${column} AND u.enabled AND ${SEES_PROJECT}
       ), sent AS (
         INSERT INTO notification_mails (run_id, user_id, kind) SELECT $2, id, $3 FROM wanted
         ON CONFLICT DO NOTHING RETURNING user_id
       )
       SELECT w.email, w.full_name AS "fullName" FROM wanted w JOIN sent ON sent.user_id = w.id ORDER BY w.id`,
      [projectId, runId, kind],
    );
  }

  async runAndProject(
    tx: EntityManager,
    runId: string,
  ): Promise<
    | {
        runName: string;
        projectName: string;
        counts: { total: number; passed: number; failed: number; broken: number; skipped: number };
      }
    | undefined
  > {
    const [row]: {
      runName: string;
      projectName: string;
      total: number;
      passed: number;
      failed: number;
      broken: number;
      skipped: number;
    }[] = await tx.query(
      `SELECT r.name AS "runName", p.name AS "projectName", r.count_total AS total, r.count_passed AS passed,
              r.count_failed AS failed, r.count_broken AS broken, r.count_skipped AS skipped
         FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.id = $1`,
      [runId],
    );
    if (!row) {
      return undefined;
    }
    const { runName, projectName, ...counts } = row;
    return { runName, projectName, counts };
  }

  /** The project's name and its OWNERs' addresses (direct or through a group), enabled accounts only. */
  async owners(
    manager: EntityManager,
    projectId: string,
  ): Promise<{ projectName: string; emails: string[] }> {
    const rows: { email: string; project_name: string }[] = await manager.query(
      `SELECT DISTINCT u.email, p.name AS project_name FROM projects p
         JOIN (SELECT pm.user_id FROM project_members pm WHERE pm.project_id = $1 AND pm.role = 'OWNER'
               UNION SELECT gm.user_id FROM group_bindings b JOIN group_members gm ON gm.group_id = b.group_id
                      WHERE b.project_id = $1 AND b.role = 'OWNER') o ON true
         JOIN users u ON u.id = o.user_id AND u.enabled
        WHERE p.id = $1`,
      [projectId],
    );
    const [project]: { name: string }[] = rows.length
      ? [{ name: rows[0].project_name }]
      : await manager.query(`SELECT name FROM projects WHERE id = $1`, [projectId]);
    return { projectName: project?.name ?? `project ${projectId}`, emails: rows.map((r) => r.email) };
  }
}
