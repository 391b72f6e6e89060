import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { atLeast, type ProjectRole } from '../access/roles.js';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import {
  effectiveSettings,
  flakyProblem,
  type ProjectSettings,
  validatePatch,
} from '../common/project-settings.js';
import { SETTINGS_CHANGED_EVENT, type SettingsChangedEvent } from '../stability/stability.events.js';
import { SettingsRepository } from './settings.repository.js';

@Injectable()
export class SettingsService {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly events: EventEmitter2,
  ) {}

  async get(projectId: string): Promise<ProjectSettings> {
    return effectiveSettings(await this.settings.stored(projectId));
  }

  /** MAINTAINER for every group but `retention`, which needs OWNER; validated whole, audited. */
  async change(
    user: AuthUser,
    projectId: string,
    role: ProjectRole,
    body: unknown,
    ip: string,
  ): Promise<ProjectSettings> {
    const patch = validatePatch(body);
    if (patch.retention !== undefined && !atLeast(role, 'OWNER')) {
      throw AppError.forbidden(
        `Changing retention needs the OWNER role in project ${projectId}; you have ${role}`,
      );
    }
    if (patch.flaky !== undefined) {
      const problem = flakyProblem(await this.settings.stored(projectId), patch);
      if (problem) {
        throw AppError.validation(problem);
      }
    }
    const settings = effectiveSettings(await this.settings.change(projectId, patch));
    const record: AuditRecord = {
      type: 'PROJECT_SETTINGS_CHANGED',
      actorId: user.id,
      ip,
      target: `project:${projectId}`,
      details: { changed: patch },
    };
    this.events.emit(AUDIT_EVENT, record);
    this.events.emit(SETTINGS_CHANGED_EVENT, { projectId } satisfies SettingsChangedEvent);
    return settings;
  }
}
