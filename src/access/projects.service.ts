import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { PURGE_REQUESTED } from '../common/purge.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { isUniqueViolation } from '../common/db-errors.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import type { PageQueryDto } from '../common/paging/page-query.dto.js';
import { UsersRepository } from '../users/users.repository.js';
import type {
  CreateProjectDto,
  LatestRunDto,
  ProjectDto,
  ProjectMemberDto,
  ProjectsQueryDto,
  UpdateProjectDto,
} from './dto/project.dto.js';
import type { ProjectEntity } from './entities.js';
import { ProjectAccessRepository } from './project-access.repository.js';
import { ProjectAccessService } from './project-access.service.js';
import { LockedMembers, MemberRow, ProjectsRepository } from './projects.repository.js';
import type { ProjectRole } from './roles.js';

@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly accessFacts: ProjectAccessRepository,
    private readonly access: ProjectAccessService,
    private readonly users: UsersRepository,
    private readonly events: EventEmitter2,
  ) {}

  async create(user: AuthUser, dto: CreateProjectDto, ip: string): Promise<ProjectDto> {
    try {
      const project = await this.projects.createWithOwner(
        { key: dto.key, name: dto.name.trim(), description: dto.description ?? null },
        user.id,
      );
      this.audit({ type: 'PROJECT_CREATED', actorId: user.id, ip, target: `project:${project.id}`, details: { key: project.key } });
      return toProjectDto(project, 'OWNER');
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw AppError.conflict(`A project with key ${dto.key} already exists`);
      }
      throw error;
    }
  }

  async list(user: AuthUser, query: ProjectsQueryDto): Promise<Page<ProjectDto>> {
    const page = pageRequest(query, ['id', 'key', 'name', 'createdAt'] as const, [{ field: 'name', direction: 'ASC' }]);
    const admin = (await this.users.findById(user.id))?.admin ?? false;
    const [rows, total] = await this.projects.listVisible(user.id, admin, page, query.key);
    const roles = admin ? new Map<string, ProjectRole>() : await this.accessFacts.rolesOf(user.id, rows.map((p) => p.id));
    const latest = await this.projects.latestRuns(rows.map((p) => p.id));
    return toPage(
      rows.map((p) => toProjectDto(p, admin ? 'OWNER' : (roles.get(p.id) ?? 'VIEWER'), latest.get(String(p.id)))),
      total,
      page,
    );
  }

  async get(projectId: string, role: ProjectRole): Promise<ProjectDto> {
    const project = await this.found(projectId);
    const latest = await this.projects.latestRuns([project.id]);
    return toProjectDto(project, role, latest.get(String(project.id)));
  }

  async update(user: AuthUser, projectId: string, dto: UpdateProjectDto, role: ProjectRole, ip: string): Promise<ProjectDto> {
    await this.found(projectId);
    const changes: Partial<Pick<ProjectEntity, 'name' | 'description'>> = {};
    if (dto.name !== undefined) {
      changes.name = dto.name.trim();
    }
    if (dto.description !== undefined) {
      changes.description = dto.description;
    }
    if (Object.keys(changes).length) {
      await this.projects.update(projectId, changes);
      this.audit({ type: 'PROJECT_UPDATED', actorId: user.id, ip, target: `project:${projectId}`, details: { updated: Object.keys(changes) } });
    }
    return this.get(projectId, role);
  }

  async delete(user: AuthUser, projectId: string, ip: string): Promise<void> {
    const project = await this.found(projectId);
    if (!(await this.projects.delete(projectId))) {
      throw AppError.notFound(`Project ${projectId} not found`);
    }
    this.events.emit(PURGE_REQUESTED);
    // The name goes into the event: once the project is gone, the trail can no longer look it up.
    this.audit({ type: 'PROJECT_DELETED', actorId: user.id, ip, target: `project:${projectId}`, details: { key: project.key, name: project.name } });
  }

  async members(projectId: string, query: PageQueryDto): Promise<Page<ProjectMemberDto>> {
    const page = pageRequest(query, ['email', 'fullName', 'role'] as const, [{ field: 'email', direction: 'ASC' }]);
    const [rows, total] = await this.projects.members(projectId, page);
    return toPage(rows.map(toMemberDto), total, page);
  }

  /** Sets a direct role; answers the member's row as the member list shows it. */
  async setMember(actor: AuthUser, projectId: string, userId: string, role: ProjectRole, ip: string): Promise<ProjectMemberDto> {
    const user = /^\d{1,18}$/.test(userId) ? await this.users.findById(userId) : null;
    if (!user) {
      throw AppError.notFound(`User ${userId} not found`);
    }
    const from = await this.projects.withMembersLocked(projectId, async (members) => {
      await this.stillOwner(actor, projectId);
      const current = await members.directRole(userId);
      if (current === 'OWNER' && role !== 'OWNER') {
        await keepAnOwner(members);
      }
      await members.set(userId, role);
      return current;
    });
    this.audit({ type: 'ROLE_CHANGED', actorId: actor.id, ip, target: `project:${projectId}`, details: { userId: Number(userId), from, to: role } });
    const row = await this.projects.member(projectId, userId);
    return row ? toMemberDto(row) : { userId: Number(user.id), email: user.email, fullName: user.fullName, role, via: 'DIRECT', platformAdmin: user.admin };
  }

  async removeMember(actor: AuthUser, projectId: string, userId: string, ip: string): Promise<void> {
    const from = !/^\d{1,18}$/.test(userId)
      ? null
      : await this.projects.withMembersLocked(projectId, async (members) => {
          await this.stillOwner(actor, projectId);
          const current = await members.directRole(userId);
          if (current === 'OWNER') {
            await keepAnOwner(members);
          }
          if (current) {
            await members.remove(userId);
          }
          return current;
        });
    if (!from) {
      throw AppError.notFound(`User ${userId} is not a direct member of project ${projectId}`);
    }
    this.audit({ type: 'ROLE_CHANGED', actorId: actor.id, ip, target: `project:${projectId}`, details: { userId: Number(userId), from, to: null } });
  }

  /**
   * The route's guard checked the actor's OWNER role before the request waited for the membership lock; a change
   * that went first (another OWNER demoting this one) may have taken it since.
   */
  private async stillOwner(actor: AuthUser, projectId: string): Promise<void> {
    if ((await this.access.roleOf(actor.id, projectId)) !== 'OWNER') {
      throw AppError.conflict(`You are no longer OWNER of project ${projectId}: a change made meanwhile took that role`);
    }
  }

  private async found(projectId: string): Promise<ProjectEntity> {
    const project = await this.projects.findById(projectId);
    if (!project) {
      throw AppError.notFound(`Project ${projectId} not found`);
    }
    return project;
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}

/** A project always keeps at least one direct OWNER, so nobody is locked out of its settings. */
async function keepAnOwner(members: LockedMembers): Promise<void> {
  if ((await members.countDirectOwners()) <= 1) {
    throw AppError.conflict('A project needs at least one OWNER: make someone else OWNER first');
  }
}

function toMemberDto(r: MemberRow): ProjectMemberDto {
  return { userId: Number(r.userId), email: r.email, fullName: r.fullName, role: r.role, via: r.via, platformAdmin: r.platformAdmin };
}

export function toProjectDto(p: ProjectEntity, role: ProjectRole, latestRun?: LatestRunDto): ProjectDto {
  return {
    id: Number(p.id),
    key: p.key,
    name: p.name,
    description: p.description,
    role,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    latestRun: latestRun ?? null,
  };
}
