import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import type { PageRequest } from '../common/paging/page.js';
import { RUN_SUMMARY_COLUMNS, runSummaryOf, type RunSummaryRow } from '../common/run-summary.js';
import type { LatestRunDto } from './dto/project.dto.js';
import { ProjectEntity, ProjectMemberEntity } from './entities.js';
import type { ProjectRole } from './roles.js';
import { ROLE_ORDER_SQL } from './roles.js';

export type ProjectSortField = 'id' | 'key' | 'name' | 'createdAt';
export type MemberSortField = 'email' | 'fullName' | 'role';

export interface MemberRow {
  userId: string;
  email: string;
  fullName: string;
  role: ProjectRole;
  via: 'DIRECT' | 'GROUP';
  platformAdmin: boolean;
}

const MEMBER_SORT: Record<MemberSortField, string> = {
  email: 'u.email',
  fullName: 'u.full_name',
  role: `array_position(${ROLE_ORDER_SQL}, best.role)`,
};

/** Each member's best role (direct or through a group) with the user's fields; `$1` is the project. */
const MEMBERS_SQL = `WITH r AS (
         SELECT user_id, role, 'DIRECT' AS via FROM project_members WHERE project_id = $1
         UNION ALL
         SELECT m.user_id, b.role, 'GROUP' FROM group_bindings b JOIN group_members m ON m.group_id = b.group_id
          WHERE b.project_id = $1
       ), best AS (
         SELECT DISTINCT ON (user_id) user_id, role, via FROM r
          ORDER BY user_id, array_position(${ROLE_ORDER_SQL}, role) DESC, via ASC
       )
       SELECT best.user_id AS "userId", u.email, u.full_name AS "fullName", best.role, best.via,
              u.admin AS "platformAdmin", count(*) OVER () AS total
         FROM best JOIN users u ON u.id = best.user_id`;

/** A row of MEMBERS_SQL without its window count, the id a string as ids are elsewhere. */
function memberRow({ total: _t, ...row }: MemberRow & { total: string }): MemberRow {
  return { ...row, userId: String(row.userId) };
}

@Injectable()
export class ProjectsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Creates the project with its creator as OWNER, atomically. */
  createWithOwner(
    fields: Pick<ProjectEntity, 'key' | 'name' | 'description'>,
    ownerId: string,
  ): Promise<ProjectEntity> {
    return this.db.transaction(async (tx) => {
      const project = await tx
        .getRepository(ProjectEntity)
        .save(tx.getRepository(ProjectEntity).create(fields));
      await tx
        .getRepository(ProjectMemberEntity)
        .insert({ projectId: project.id, userId: ownerId, role: 'OWNER' });
      return project;
    });
  }

  findById(id: string): Promise<ProjectEntity | null> {
    return this.db.getRepository(ProjectEntity).findOneBy({ id, deletingAt: IsNull() });
  }

  /** Projects the user can see (all of them for platform admins); with `key`, only the one of that key. */
  async listVisible(
    userId: string,
    all: boolean,
    page: PageRequest<ProjectSortField>,
    key?: string,
  ): Promise<[ProjectEntity[], number]> {
    const query = this.db.getRepository(ProjectEntity).createQueryBuilder('p').where('p.deleting_at IS NULL');
    if (key !== undefined) {
      query.andWhere('p.key = :key', { key });
    }
    if (!all) {
      query.andWhere(
        `p.id IN (SELECT project_id FROM project_members WHERE user_id = :userId
                  UNION SELECT b.project_id FROM group_bindings b JOIN group_members m ON m.group_id = b.group_id
                         WHERE m.user_id = :userId)`,
        { userId },
      );
    }
    for (const { field, direction } of page.sort) {
      query.addOrderBy(`p.${field}`, direction);
    }
    return query.addOrderBy('p.id', 'ASC').offset(page.offset).limit(page.size).getManyAndCount();
  }

  /**
   * Each project's latest finished run of its default stream (API.md, "Streams"): the settings' streams.default,
   * else the stream with the most runs started in the last 30 days (the later latest run on a tie), else that of the
   * latest finished run; so a one-off upload does not hide the nightly. By ix_runs_project_stream_started.
   */
  async latestRuns(projectIds: string[]): Promise<Map<string, LatestRunDto>> {
    if (!projectIds.length) {
      return new Map();
    }
    const rows: (RunSummaryRow & { project_id: string })[] = await this.db.query(
      `SELECT p.id AS project_id, r.* FROM projects p
         CROSS JOIN LATERAL (
           SELECT coalesce(
             p.settings #>> '{streams,default}',
             (SELECT stream FROM runs WHERE project_id = p.id AND started_at > now() - interval '30 days'
               GROUP BY stream ORDER BY count(*) DESC, max(started_at) DESC LIMIT 1),
             (SELECT stream FROM runs WHERE project_id = p.id AND status = 'FINISHED' ORDER BY started_at DESC, id DESC LIMIT 1)
           ) AS stream) d
         CROSS JOIN LATERAL (
           SELECT ${RUN_SUMMARY_COLUMNS}
             FROM runs WHERE project_id = p.id AND stream = d.stream AND status = 'FINISHED'
            ORDER BY started_at DESC, id DESC LIMIT 1) r
        WHERE p.id = ANY($1::bigint[])`,
      [projectIds],
    );
    return new Map(rows.map((r) => [String(r.project_id), runSummaryOf(r)]));
  }

  async update(id: string, changes: Partial<Pick<ProjectEntity, 'name' | 'description'>>): Promise<void> {
    await this.db.getRepository(ProjectEntity).update({ id }, changes);
  }

  /**
   * Hides the project at once, whatever its size: every read and role check leaves out a project with deleting_at,
   * and its key is free for a new project (uq_projects_key_live). The purge (src/retention/) then removes its runs, results and test
   * cases in bounded batches, and the row last. False when it was gone or being deleted already.
   */
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [, affected]: [unknown, number] = await tx.query(
        `UPDATE projects SET deleting_at = now() WHERE id = $1 AND deleting_at IS NULL`,
        [id],
      );
      if (affected > 0) {
        // Its few memberships and group bindings go at once, with the project's visibility.
        await tx.query('DELETE FROM project_members WHERE project_id = $1', [id]);
        await tx.query('DELETE FROM group_bindings WHERE project_id = $1', [id]);
      }
      return affected > 0;
    });
  }

  async members(projectId: string, page: PageRequest<MemberSortField>): Promise<[MemberRow[], number]> {
    const order = page.sort.map((s) => `${MEMBER_SORT[s.field]} ${s.direction}`).join(', ');
    const rows: (MemberRow & { total: string })[] = await this.db.query(
      `${MEMBERS_SQL}
        ORDER BY ${order}, u.id
        LIMIT $2 OFFSET $3`,
      [projectId, page.size, page.offset],
    );
    const total = rows.length ? Number(rows[0].total) : await this.countMembers(projectId);
    return [rows.map(memberRow), total];
  }

  /** One user's row of the member list, as the list shows it; null when they are no member. */
  async member(projectId: string, userId: string): Promise<MemberRow | null> {
    const [row]: (MemberRow & { total: string })[] = await this.db.query(
      `${MEMBERS_SQL} WHERE best.user_id = $2`,
      [projectId, userId],
    );
    return row ? memberRow(row) : null;
  }

  /**
   * Runs `change` with the project's memberships to itself, in one transaction: the project row is locked
   * (FOR NO KEY UPDATE, which lets rows that reference the project be written meanwhile), so concurrent changes
   * of one project's members take turns, and a rule `change` checks (a project keeps an OWNER) still holds
   * when it commits. Without it, two OWNERs demoting each other at once both counted two OWNERs.
   */
  withMembersLocked<T>(projectId: string, change: (members: LockedMembers) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [projectId]);
      return change(new LockedMembers(tx, projectId));
    });
  }

  private async countMembers(projectId: string): Promise<number> {
    const [{ n }]: { n: string }[] = await this.db.query(
      `SELECT count(DISTINCT user_id) AS n FROM (
         SELECT user_id FROM project_members WHERE project_id = $1
         UNION SELECT m.user_id FROM group_bindings b JOIN group_members m ON m.group_id = b.group_id WHERE b.project_id = $1
       ) x`,
      [projectId],
    );
    return Number(n);
  }
}

/** A project's direct memberships inside {@link ProjectsRepository.withMembersLocked}'s transaction. */
export class LockedMembers {
  constructor(
    private readonly tx: EntityManager,
    private readonly projectId: string,
  ) {}

  async directRole(userId: string): Promise<ProjectRole | null> {
    return (
      (await this.tx.getRepository(ProjectMemberEntity).findOneBy({ projectId: this.projectId, userId }))
        ?.role ?? null
    );
  }

  countDirectOwners(): Promise<number> {
    return this.tx.getRepository(ProjectMemberEntity).countBy({ projectId: this.projectId, role: 'OWNER' });
  }

  async set(userId: string, role: ProjectRole): Promise<void> {
    await this.tx.query(
      `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
      [this.projectId, userId, role],
    );
  }

  async remove(userId: string): Promise<void> {
    await this.tx.getRepository(ProjectMemberEntity).delete({ projectId: this.projectId, userId });
  }
}
