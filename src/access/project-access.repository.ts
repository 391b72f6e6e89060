import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ProjectRole } from './roles.js';
import { ROLE_ORDER_SQL } from './roles.js';

export interface AccessFacts {
  projectExists: boolean;
  admin: boolean;
  enabled: boolean;
  /** Highest of the direct membership and every binding of every group of the user; null when none. */
  role: ProjectRole | null;
}


@Injectable()
export class ProjectAccessRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Everything a role decision needs, in one round trip. */
  async facts(userId: string, projectId: string): Promise<AccessFacts> {
    const rows: { project_exists: boolean; admin: boolean | null; enabled: boolean | null; role: ProjectRole | null }[] =
      await this.db.query(
        `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $2 AND deleting_at IS NULL) AS project_exists,
                u.admin, u.enabled,
                (SELECT r.role FROM (
                   SELECT role FROM project_members WHERE project_id = $2 AND user_id = $1
                   UNION ALL
                   SELECT b.role FROM group_bindings b
                     JOIN group_members m ON m.group_id = b.group_id
                    WHERE b.project_id = $2 AND m.user_id = $1
                 ) r ORDER BY array_position(${ROLE_ORDER_SQL}, r.role) DESC LIMIT 1) AS role
           FROM (SELECT 1) one LEFT JOIN users u ON u.id = $1`,
        [userId, projectId],
      );
    const row = rows[0];
    return {
      projectExists: row.project_exists,
      admin: row.admin ?? false,
      enabled: row.enabled ?? false,
      role: row.role,
    };
  }

  /** The user's effective role in each project they can see (admins: none here; they see all). */
  async rolesOf(userId: string, projectIds: string[]): Promise<Map<string, ProjectRole>> {
    if (!projectIds.length) {
      return new Map();
    }
    const rows: { project_id: string; role: ProjectRole }[] = await this.db.query(
      `SELECT DISTINCT ON (project_id) project_id, role FROM (
         SELECT project_id, role FROM project_members WHERE user_id = $1 AND project_id = ANY($2::bigint[])
         UNION ALL
         SELECT b.project_id, b.role FROM group_bindings b JOIN group_members m ON m.group_id = b.group_id
          WHERE m.user_id = $1 AND b.project_id = ANY($2::bigint[])
       ) r ORDER BY project_id, array_position(${ROLE_ORDER_SQL}, role) DESC`,
      [userId, projectIds],
    );
    return new Map(rows.map((r) => [String(r.project_id), r.role]));
  }
}
