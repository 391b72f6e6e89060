import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import type { PageRequest } from '../common/paging/page.js';
import { UserEntity } from '../users/user.entity.js';

/** pg_advisory_xact_lock key: changes to who is a platform admin take turns. */
const ADMINS_LOCK = 7_246_901_401;

export type AdminUserSortField = 'id' | 'email' | 'fullName' | 'createdAt';

const COLUMN_OF: Record<AdminUserSortField, string> = {
  id: 'u.id',
  email: 'u.email',
  fullName: 'u.full_name',
  createdAt: 'u.created_at',
};

@Injectable()
export class AdminUsersRepository {
  constructor(@InjectRepository(UserEntity) private readonly users: Repository<UserEntity>) {}

  /** Users whose email or full name contains `q` (case-insensitive, taken literally), in the requested order. */
  search(q: string | undefined, page: PageRequest<AdminUserSortField>): Promise<[UserEntity[], number]> {
    const query = this.users.createQueryBuilder('u');
    if (q) {
      const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query.where(`(u.email ILIKE :pattern ESCAPE '\\' OR u.full_name ILIKE :pattern ESCAPE '\\')`, {
        pattern,
      });
    }
    for (const { field, direction } of page.sort) {
      query.addOrderBy(COLUMN_OF[field], direction);
    }
    // addOrderBy keys on the expression: adding `u.id` again would override an explicit id order.
    if (!page.sort.some((s) => s.field === 'id')) {
      query.addOrderBy('u.id', 'ASC');
    }
    return query.offset(page.offset).limit(page.size).getManyAndCount();
  }

  /**
   * Runs `change` in one transaction holding the platform-admins lock, so that concurrent changes of admin rights
   * or of an admin's account take turns, and a rule `change` checks (an enabled admin remains) still holds when
   * it commits. Without it, two admins demoting each other at once both saw another admin left.
   */
  withAdminsLocked<T>(change: (admins: LockedAdmins) => Promise<T>): Promise<T> {
    return this.users.manager.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [ADMINS_LOCK]);
      return change(new LockedAdmins(tx));
    });
  }
}

/** Admin rights and accounts inside {@link AdminUsersRepository.withAdminsLocked}'s transaction. */
export class LockedAdmins {
  constructor(private readonly tx: EntityManager) {}

  async isEnabledAdmin(userId: string): Promise<boolean> {
    return (await this.tx.getRepository(UserEntity).countBy({ id: userId, admin: true, enabled: true })) > 0;
  }

  async countEnabledAdminsBut(userId: string): Promise<number> {
    const [{ n }]: { n: string }[] = await this.tx.query(
      'SELECT count(*) AS n FROM users WHERE admin AND enabled AND id <> $1',
      [userId],
    );
    return Number(n);
  }

  async update(userId: string, changes: Partial<Pick<UserEntity, 'admin' | 'enabled'>>): Promise<void> {
    await this.tx.getRepository(UserEntity).update({ id: userId }, changes);
  }
}
