import { Injectable } from '@nestjs/common';
import type { GroupEntity } from '../access/entities.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import type { PageQueryDto } from '../common/paging/page-query.dto.js';
import type { UserEntity } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { AdminAudit, isDbId } from './admin-audit.js';
import { AdminGroupsRepository, Binding, GroupSortField } from './admin-groups.repository.js';
import type {
  CreatedGroupDto,
  CreateGroupDto,
  GroupBindingDto,
  GroupDto,
  GroupMemberDto,
  GroupSummaryDto,
} from './dto/group.dto.js';

const SORTABLE: readonly GroupSortField[] = ['id', 'name'];

@Injectable()
export class AdminGroupsService {
  constructor(
    private readonly groups: AdminGroupsRepository,
    private readonly users: UsersRepository,
    private readonly audit: AdminAudit,
  ) {}

  async create(actor: AuthUser, dto: CreateGroupDto, ip: string): Promise<CreatedGroupDto> {
    // The name is kept exactly as given: directory groups match it case-sensitively.
    const group = await this.groups.create(dto.name);
    if (!group) {
      throw AppError.conflict(`A group named "${dto.name}" already exists`);
    }
    await this.audit.record(actor, ip, 'GROUP_CHANGED', target(group), {
      action: 'CREATED',
      name: group.name,
    });
    return { id: Number(group.id), name: group.name, bindings: [] };
  }

  async list(query: PageQueryDto): Promise<Page<GroupSummaryDto>> {
    const page = pageRequest(query, SORTABLE, [{ field: 'name', direction: 'ASC' }]);
    const [rows, total] = await this.groups.list(page);
    return toPage(
      rows.map((r) => ({ id: Number(r.id), name: r.name, memberCount: r.memberCount })),
      total,
      page,
    );
  }

  async rename(actor: AuthUser, id: string, dto: CreateGroupDto, ip: string): Promise<GroupDto> {
    const before = await this.require(id);
    const outcome = await this.groups.rename(id, dto.name);
    if (outcome === 'missing') {
      throw notFound(id);
    }
    if (outcome === 'taken') {
      throw AppError.conflict(`A group named "${dto.name}" already exists`);
    }
    await this.audit.record(actor, ip, 'GROUP_CHANGED', target(before), { action: 'RENAMED', from: before.name, name: dto.name });
    return this.toGroupDto({ ...before, name: dto.name });
  }

  async members(id: string): Promise<GroupMemberDto[]> {
    await this.require(id);
    return (await this.groups.members(id)).map((m) => ({
      userId: Number(m.user_id),
      email: m.email,
      fullName: m.full_name,
      source: m.source,
    }));
  }

  async get(id: string): Promise<GroupDto> {
    return this.toGroupDto(await this.require(id));
  }

  async delete(actor: AuthUser, id: string, ip: string): Promise<void> {
    const group = isDbId(id) ? await this.groups.delete(id) : null;
    if (!group) {
      throw notFound(id);
    }
    await this.audit.record(actor, ip, 'GROUP_CHANGED', target(group), {
      action: 'DELETED',
      name: group.name,
    });
  }

  async replaceBindings(
    actor: AuthUser,
    id: string,
    items: GroupBindingDto[],
    ip: string,
  ): Promise<GroupDto> {
    if (!isDbId(id)) {
      throw notFound(id);
    }
    const seen = new Map<number, number>();
    for (const [index, item] of items.entries()) {
      const first = seen.get(item.projectId);
      if (first !== undefined) {
        throw AppError.validation(
          `[${index}].projectId ${item.projectId} is bound already at [${first}]; each project may appear once`,
        );
      }
      seen.set(item.projectId, index);
    }
    const wanted: Binding[] = items.map((b) => ({ projectId: String(b.projectId), role: b.role }));
    const outcome = await this.groups.replaceBindings(id, wanted);
    if (outcome.kind === 'no-group') {
      throw notFound(id);
    }
    if (outcome.kind === 'unknown-projects') {
      const problems = outcome.projectIds.map(
        (p) =>
          `[${items.findIndex((i) => String(i.projectId) === p)}].projectId: project ${p} does not exist`,
      );
      throw AppError.validation(`${problems.join('; ')}; nothing was changed`);
    }
    const changes = diff(outcome.before, wanted);
    if (changes.added.length || changes.removed.length || changes.changed.length) {
      await this.audit.record(actor, ip, 'GROUP_CHANGED', target(outcome.group), {
        action: 'BINDINGS_REPLACED',
        name: outcome.group.name,
        ...changes,
      });
    }
    return this.toGroupDto(outcome.group);
  }

  async addMember(actor: AuthUser, id: string, userId: string, ip: string): Promise<void> {
    const group = await this.require(id);
    const user = await this.requireUser(userId);
    const added = await this.groups.addManualMember(group.id, user.id);
    if (added === null) {
      throw AppError.notFound(`Group ${id} or user ${userId} not found`);
    }
    if (added) {
      await this.audit.record(actor, ip, 'GROUP_CHANGED', target(group), {
        action: 'MEMBER_ADDED',
        name: group.name,
        userId: Number(user.id),
        email: user.email,
      });
    }
  }

  async removeMember(actor: AuthUser, id: string, userId: string, ip: string): Promise<void> {
    const group = await this.require(id);
    const user = await this.requireUser(userId);
    if (await this.groups.removeManualMember(group.id, user.id)) {
      await this.audit.record(actor, ip, 'GROUP_CHANGED', target(group), {
        action: 'MEMBER_REMOVED',
        name: group.name,
        userId: Number(user.id),
        email: user.email,
      });
    }
  }

  private async require(id: string): Promise<GroupEntity> {
    const group = isDbId(id) ? await this.groups.findById(id) : null;
    if (!group) {
      throw notFound(id);
    }
    return group;
  }

  private async requireUser(userId: string): Promise<UserEntity> {
    const user = isDbId(userId) ? await this.users.findById(userId) : null;
    if (!user) {
      throw AppError.notFound(`User ${userId} not found`);
    }
    return user;
  }

  private async toGroupDto(group: GroupEntity): Promise<GroupDto> {
    const [bindings, memberCount] = await Promise.all([
      this.groups.bindingsOf(group.id),
      this.groups.memberCount(group.id),
    ]);
    return {
      id: Number(group.id),
      name: group.name,
      bindings: bindings.map((b) => ({ projectId: Number(b.projectId), role: b.role })),
      memberCount,
    };
  }
}

function target(group: GroupEntity): string {
  return `group:${group.id}`;
}

function notFound(id: string): AppError {
  return AppError.notFound(`Group ${id} not found`);
}

/** What a replacement changed, for the audit trail. */
function diff(before: Binding[], after: Binding[]) {
  const old = new Map(before.map((b) => [b.projectId, b.role]));
  const now = new Map(after.map((b) => [b.projectId, b.role]));
  return {
    added: after
      .filter((b) => !old.has(b.projectId))
      .map((b) => ({ projectId: Number(b.projectId), role: b.role })),
    removed: before
      .filter((b) => !now.has(b.projectId))
      .map((b) => ({ projectId: Number(b.projectId), role: b.role })),
    changed: after
      .filter((b) => old.has(b.projectId) && old.get(b.projectId) !== b.role)
      .map((b) => ({ projectId: Number(b.projectId), from: old.get(b.projectId), to: b.role })),
  };
}
