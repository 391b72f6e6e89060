import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { ProjectAccessRepository } from './project-access.repository.js';
import { atLeast, ProjectRole } from './roles.js';

/**
 * The one place that decides what a user may do in a project: the HTTP guard, services checking inside
 * batches and the WebSocket gateway all ask here, on every request (so a demotion counts at once).
 */
@Injectable()
export class ProjectAccessService {
  constructor(private readonly repository: ProjectAccessRepository) {}

  /** The user's effective role, OWNER for platform admins; null when the project is invisible to them. */
  async roleOf(userId: string, projectId: string): Promise<ProjectRole | null> {
    if (!/^\d{1,18}$/.test(projectId)) {
      return null;
    }
    const facts = await this.repository.facts(userId, projectId);
    if (!facts.projectExists || !facts.enabled) {
      return null;
    }
    return facts.admin ? 'OWNER' : facts.role;
  }

  /**
   * Throws unless the user holds `required` in the project: 404 when they cannot see it at all (no
   * existence leak), 403 when they can see it with too low a role. Returns the role they hold.
   */
  async require(user: Pick<AuthUser, 'id'>, projectId: string, required: ProjectRole): Promise<ProjectRole> {
    const role = await this.roleOf(user.id, projectId);
    if (!role) {
      throw AppError.notFound(`Project ${projectId} not found`);
    }
    if (!atLeast(role, required)) {
      throw AppError.forbidden(`This needs the ${required} role in project ${projectId}; you have ${role}`);
    }
    return role;
  }
}
