import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import { GroupBindingEntity, GroupEntity, GroupMemberEntity } from '../access/entities.js';
import type { ProjectRole } from '../access/roles.js';
import type { PageRequest } from '../common/paging/page.js';

export type GroupSortField = 'id' | 'name';

const COLUMN_OF: Record<GroupSortField, string> = { id: 'g.id', name: 'g.name' };

export interface GroupRow {
  id: string;
  name: string;
  memberCount: number;
}

export interface Binding {
  projectId: string;
  role: ProjectRole;
}

export type ReplaceOutcome =
  | { kind: 'replaced'; group: GroupEntity; before: Binding[] }
  | { kind: 'no-group' }
  | { kind: 'unknown-projects'; projectIds: string[] };

const MEMBER_COUNT = `(SELECT count(DISTINCT m.user_id) FROM group_members m WHERE m.group_id = g.id)::int`;

@Injectable()
export class AdminGroupsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The new group, or null when a group with exactly this name exists. */
  async create(name: string): Promise<GroupEntity | null> {
    const groups = this.db.getRepository(GroupEntity);
    try {
      return await groups.save(groups.create({ name }));
    } catch (error) {
      if (isViolation(error, '23505')) {
        return null;
      }
      throw error;
    }
  }

  /** 'renamed', 'missing' (no such group), or 'taken' (another group has the name). */
  async rename(id: string, name: string): Promise<'renamed' | 'missing' | 'taken'> {
    try {
      const [, affected]: [unknown, number] = await this.db.query(`UPDATE groups SET name = $2 WHERE id = $1`, [id, name]);
      return affected ? 'renamed' : 'missing';
    } catch (error) {
      if (isViolation(error, '23505')) {
        return 'taken';
      }
      throw error;
    }
  }

  /** The group's members by name, each membership with its source (a user may be in it both ways). */
  async members(groupId: string): Promise<{ user_id: string; email: string; full_name: string; source: 'MANUAL' | 'DIRECTORY' }[]> {
    return this.db.query(
      `SELECT m.user_id, u.email, u.full_name, m.source FROM group_members m JOIN users u ON u.id = m.user_id
        WHERE m.group_id = $1 ORDER BY u.full_name, u.email, m.source`,
      [groupId],
    );
  }

  findById(id: string): Promise<GroupEntity | null> {
    return this.db.getRepository(GroupEntity).findOneBy({ id });
  }

  async list(page: PageRequest<GroupSortField>): Promise<[GroupRow[], number]> {
    const order = page.sort.map((s) => `${COLUMN_OF[s.field]} ${s.direction}`);
    if (!page.sort.some((s) => s.field === 'id')) {
      order.push('g.id ASC');
    }
    const [rows, totals] = await Promise.all([
      this.db.query<{ id: string; name: string; memberCount: number }[]>(
        `SELECT g.id, g.name, ${MEMBER_COUNT} AS "memberCount"
           FROM groups g ORDER BY ${order.join(', ')} LIMIT $1 OFFSET $2`,
        [page.size, page.offset],
      ),
      this.db.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM groups`),
    ]);
    return [rows.map((r) => ({ ...r, id: String(r.id) })), totals[0].total];
  }

  async bindingsOf(groupId: string): Promise<Binding[]> {
    const rows = await this.db
      .getRepository(GroupBindingEntity)
      .find({ where: { groupId }, order: { projectId: 'ASC' } });
    return rows.map((b) => ({ projectId: String(b.projectId), role: b.role }));
  }

  async memberCount(groupId: string): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>(
      `SELECT count(DISTINCT user_id)::int AS n FROM group_members WHERE group_id = $1`,
      [groupId],
    );
    return rows[0].n;
  }

  /** Deletes the group with its bindings and memberships; the deleted group, or null when there was none. */
  async delete(id: string): Promise<GroupEntity | null> {
    return this.db.transaction(async (em) => {
      const group = await em.getRepository(GroupEntity).findOneBy({ id });
      if (group) {
        await em.delete(GroupEntity, { id });
      }
      return group;
    });
  }

  /**
   * Replaces all bindings of the group in one transaction. The group row is locked so concurrent replacements
   * apply one after the other, and the named projects are key-share locked so none can vanish before commit.
   */
  replaceBindings(groupId: string, bindings: Binding[]): Promise<ReplaceOutcome> {
    return this.db.transaction(async (em): Promise<ReplaceOutcome> => {
      const group = await em
        .getRepository(GroupEntity)
        .findOne({ where: { id: groupId }, lock: { mode: 'pessimistic_write' } });
      if (!group) {
        return { kind: 'no-group' };
      }
      const wanted = bindings.map((b) => b.projectId);
      const found = wanted.length
        ? await em.query<{ id: string }[]>(
            `SELECT id FROM projects WHERE id = ANY($1::bigint[]) ORDER BY id FOR KEY SHARE`,
            [wanted],
          )
        : [];
      const existing = new Set(found.map((p) => String(p.id)));
      const missing = wanted.filter((id) => !existing.has(id));
      if (missing.length) {
        return { kind: 'unknown-projects', projectIds: missing };
      }
      const before = await em.find(GroupBindingEntity, { where: { groupId }, order: { projectId: 'ASC' } });
      await em.delete(GroupBindingEntity, { groupId });
      if (bindings.length) {
        await em.insert(
          GroupBindingEntity,
          bindings.map((b) => ({ groupId, projectId: b.projectId, role: b.role })),
        );
      }
      return {
        kind: 'replaced',
        group,
        before: before.map((b) => ({ projectId: String(b.projectId), role: b.role })),
      };
    });
  }

  /**
   * Adds a MANUAL membership; true when it was added, false when it already existed, null when the group or
   * the user does not exist (any more).
   */
  async addManualMember(groupId: string, userId: string): Promise<boolean | null> {
    try {
      const rows = await this.db.query<unknown[]>(
        `INSERT INTO group_members (group_id, user_id, source) VALUES ($1, $2, 'MANUAL')
         ON CONFLICT DO NOTHING RETURNING user_id`,
        [groupId, userId],
      );
      return rows.length > 0;
    } catch (error) {
      if (isViolation(error, '23503')) {
        return null;
      }
      throw error;
    }
  }

  /** Removes the MANUAL membership only (directory sync owns DIRECTORY ones); true when there was one. */
  async removeManualMember(groupId: string, userId: string): Promise<boolean> {
    const result = await this.db
      .getRepository(GroupMemberEntity)
      .delete({ groupId, userId, source: 'MANUAL' });
    return (result.affected ?? 0) > 0;
  }
}

function isViolation(error: unknown, sqlState: string): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string }).code === sqlState;
}
