import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { PageRequest } from '../common/paging/page.js';
import { UserEntity } from '../users/user.entity.js';

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
}
