import { Injectable } from '@nestjs/common';
import { ApiTokensRepository } from '../api-tokens/api-tokens.repository.js';
import { SessionsService } from '../auth/sessions.service.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import type { UserEntity } from '../users/user.entity.js';
import { UserCache } from '../users/user-cache.js';
import { UsersRepository } from '../users/users.repository.js';
import { AdminAudit, isDbId } from './admin-audit.js';
import { AdminUserSortField, AdminUsersRepository } from './admin-users.repository.js';
import type { AdminUserDto, AdminUsersQueryDto, UpdateUserDto } from './dto/admin-user.dto.js';

const SORTABLE: readonly AdminUserSortField[] = ['id', 'email', 'fullName', 'createdAt'];

@Injectable()
export class AdminUsersService {
  constructor(
    private readonly search: AdminUsersRepository,
    private readonly users: UsersRepository,
    private readonly userCache: UserCache,
    private readonly sessions: SessionsService,
    private readonly apiTokens: ApiTokensRepository,
    private readonly audit: AdminAudit,
  ) {}

  async list(query: AdminUsersQueryDto): Promise<Page<AdminUserDto>> {
    const page = pageRequest(query, SORTABLE, [{ field: 'id', direction: 'ASC' }]);
    const [rows, total] = await this.search.search(query.q || undefined, page);
    return toPage(rows.map(toAdminUserDto), total, page);
  }

  async update(actor: AuthUser, id: string, dto: UpdateUserDto, ip: string): Promise<AdminUserDto> {
    const user = isDbId(id) ? await this.users.findById(id) : null;
    if (!user) {
      throw AppError.notFound(`User ${id} not found`);
    }
    // The acting admin must stay an enabled admin, so the platform is never left without them.
    if (user.id === actor.id && dto.admin === false) {
      throw AppError.conflict('You cannot remove your own admin rights; ask another administrator');
    }
    if (user.id === actor.id && dto.enabled === false) {
      throw AppError.conflict('You cannot disable your own account; ask another administrator');
    }
    const changes: Partial<Pick<UserEntity, 'admin' | 'enabled'>> = {};
    const described: Record<string, { from: boolean; to: boolean }> = {};
    for (const field of ['admin', 'enabled'] as const) {
      const to = dto[field];
      if (to !== undefined && to !== user[field]) {
        changes[field] = to;
        described[field] = { from: user[field], to };
      }
    }
    if (Object.keys(changes).length) {
      await this.search.withAdminsLocked(async (admins) => {
        // The guard read the actor's rights before this request waited for the lock: another admin may have
        // taken them meanwhile.
        if (!(await admins.isEnabledAdmin(actor.id))) {
          throw AppError.conflict(
            'You are no longer a platform admin: a change made meanwhile took that right',
          );
        }
        const removesAnAdmin =
          (changes.admin === false || changes.enabled === false) && (await admins.isEnabledAdmin(user.id));
        if (removesAnAdmin && (await admins.countEnabledAdminsBut(user.id)) === 0) {
          throw AppError.conflict(
            'The platform needs at least one enabled platform admin: make someone else admin first',
          );
        }
        await admins.update(user.id, changes);
      });
      // Admin checks, /me and API tokens read through the caches: every replica must see the change at once.
      await this.userCache.invalidate(user.id);
      Object.assign(user, changes);
    }
    if (dto.enabled === false) {
      // Also when already disabled: whatever credentials exist now must not outlive this request, nor come back
      // if the account is enabled again within an access token's lifetime. endAll's broadcast also reaches the
      // API-token caches.
      await this.apiTokens.deleteAllOf(user.id);
      await this.sessions.endAll(user.id);
    }
    if (Object.keys(described).length) {
      await this.audit.record(actor, ip, 'USER_UPDATED', `user:${user.id}`, {
        email: user.email,
        changes: described,
      });
    }
    return toAdminUserDto(user);
  }
}

export function toAdminUserDto(user: UserEntity): AdminUserDto {
  return {
    id: Number(user.id),
    email: user.email,
    fullName: user.fullName,
    admin: user.admin,
    enabled: user.enabled,
    authSource: user.authSource,
    emailVerified: user.emailVerified,
    createdAt: user.createdAt.toISOString(),
  };
}
