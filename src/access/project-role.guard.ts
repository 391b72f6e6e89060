import { applyDecorators, CanActivate, ExecutionContext, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { ProjectAccessService } from './project-access.service.js';
import { ProjectLocator } from './project-locator.js';
import { atLeast } from './roles.js';
import type { ProjectRole } from './roles.js';
import { AppError } from '../common/app-error.js';

const REQUIRED_ROLE = 'tms:project-role';

export interface ProjectRoleRequirement {
  role: ProjectRole;
  /** The route parameter that holds the project id. */
  param: string;
}

/**
 * Requires a role in the project a route parameter names or belongs to (`projectId` by default, `runId`, ...).
 * Answers 404 for what the caller cannot see and 403 for too low a role; the role and project id are left on
 * the request.
 */
export const RequireProjectRole = (role: ProjectRole, param = 'projectId'): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(REQUIRED_ROLE, { role, param } satisfies ProjectRoleRequirement), UseGuards(ProjectRoleGuard));

@Injectable()
export class ProjectRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: ProjectAccessService,
    private readonly locator: ProjectLocator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement = this.reflector.getAllAndOverride<ProjectRoleRequirement | undefined>(REQUIRED_ROLE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!requirement) {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request & { projectRole?: ProjectRole; projectId?: string }>();
    const value = String(req.params[requirement.param] ?? '');
    const { projectId, noun } = await this.locator.locate(requirement.param, value);
    const role = projectId ? await this.access.roleOf((req.user as AuthUser).id, projectId) : null;
    if (!projectId || !role) {
      throw AppError.notFound(`${noun} ${value} not found`);
    }
    if (!atLeast(role, requirement.role)) {
      throw AppError.forbidden(`This needs the ${requirement.role} role in project ${projectId}; you have ${role}`);
    }
    req.projectRole = role;
    req.projectId = projectId;
    return true;
  }
}
