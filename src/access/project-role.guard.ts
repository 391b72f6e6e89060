import { applyDecorators, CanActivate, ExecutionContext, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { AuthUser } from '../common/auth-user.js';
import { ProjectAccessService } from './project-access.service.js';
import type { ProjectRole } from './roles.js';

const REQUIRED_ROLE = 'tms:project-role';

export interface ProjectRoleRequirement {
  role: ProjectRole;
  /** The route parameter that holds the project id. */
  param: string;
}

/**
 * Requires a role in the project named by a route parameter (`projectId` by default). Answers 404 for a project
 * the caller cannot see and 403 for too low a role; the resolved role is left on the request.
 */
export const RequireProjectRole = (role: ProjectRole, param = 'projectId'): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(REQUIRED_ROLE, { role, param } satisfies ProjectRoleRequirement), UseGuards(ProjectRoleGuard));

@Injectable()
export class ProjectRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: ProjectAccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement = this.reflector.getAllAndOverride<ProjectRoleRequirement | undefined>(REQUIRED_ROLE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!requirement) {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request & { projectRole?: ProjectRole }>();
    const projectId = String(req.params[requirement.param] ?? '');
    req.projectRole = await this.access.require(req.user as AuthUser, projectId, requirement.role);
    return true;
  }
}
