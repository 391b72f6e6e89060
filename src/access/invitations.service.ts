import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { assertAcceptablePassword } from '../users/password-policy.js';
import { INVITATION_CREATED, InvitationCreatedEvent } from './access.events.js';
import type {
  AcceptInvitationDto,
  AcceptedMessageDto,
  InvitationAcceptedDto,
  ProjectInvitationDto,
  WorkspaceInvitationDto,
} from './dto/invitation.dto.js';
import type { InvitationEntity } from './entities.js';
import { InvitationsRepository } from './invitations.repository.js';
import { atLeast, ProjectRole } from './roles.js';

const VALID_DAYS = 7;
const INVALID = 'The invitation is invalid, has expired or was already used';

@Injectable()
export class InvitationsService {
  constructor(
    private readonly invitations: InvitationsRepository,
    private readonly hasher: PasswordHasher,
    private readonly events: EventEmitter2,
  ) {}

  async inviteToProject(
    actor: AuthUser,
    projectId: string,
    actorRole: ProjectRole,
    dto: ProjectInvitationDto,
    ip: string,
  ): Promise<AcceptedMessageDto> {
    if (!atLeast(actorRole, dto.role)) {
      throw AppError.forbidden(`You cannot invite someone as ${dto.role}: your role is ${actorRole}`);
    }
    return this.invite(actor, { kind: 'PROJECT', projectId, role: dto.role, email: dto.email }, ip);
  }

  inviteToWorkspace(actor: AuthUser, dto: WorkspaceInvitationDto, ip: string): Promise<AcceptedMessageDto> {
    return this.invite(actor, { kind: 'WORKSPACE', projectId: null, role: null, email: dto.email }, ip);
  }

  async accept(dto: AcceptInvitationDto, ip: string): Promise<InvitationAcceptedDto> {
    const result = await this.invitations.transaction(async (tx) => {
      const invitation = await this.invitations.consume(tx, digest(dto.token));
      if (!invitation) {
        throw AppError.validation(INVALID);
      }
      // A project deleted since the invitation was sent: nothing to join (and no account made for it).
      if (
        invitation.kind === 'PROJECT' &&
        !(await this.invitations.projectLive(tx, String(invitation.projectId)))
      ) {
        throw AppError.conflict('The project of this invitation was deleted: ask for a new invitation');
      }
      let user = await this.invitations.findUserByEmail(tx, invitation.email);
      let accountCreated = false;
      if (!user) {
        if (!dto.fullName?.trim()) {
          throw AppError.validation('fullName is needed to create your account');
        }
        assertAcceptablePassword(dto.password, invitation.email);
        user = await this.invitations.createUser(tx, {
          email: invitation.email,
          fullName: dto.fullName.trim(),
          passwordHash: await this.hasher.hash(dto.password),
          authSource: 'LOCAL',
          emailVerified: true,
        });
        accountCreated = true;
      } else if (!user.enabled) {
        throw AppError.forbidden('This account is disabled');
      }
      const role =
        invitation.kind === 'PROJECT'
          ? await this.invitations.grantAtLeast(tx, String(invitation.projectId), user.id, invitation.role!)
          : null;
      return { invitation, user, role, accountCreated };
    });
    this.audit({
      type: 'INVITATION_ACCEPTED',
      actorId: result.user.id,
      actorEmail: result.user.email,
      ip,
      target: result.invitation.projectId ? `project:${result.invitation.projectId}` : 'workspace',
      details: { invitationId: Number(result.invitation.id), role: result.role, accountCreated: result.accountCreated },
    });
    return {
      userId: Number(result.user.id),
      email: result.user.email,
      projectId: result.invitation.projectId === null ? null : Number(result.invitation.projectId),
      role: result.role,
      accountCreated: result.accountCreated,
    };
  }

  private async invite(
    actor: AuthUser,
    target: Pick<InvitationEntity, 'kind' | 'projectId' | 'role' | 'email'>,
    ip: string,
  ): Promise<AcceptedMessageDto> {
    const token = randomBytes(32).toString('base64url');
    const email = target.email.trim().toLowerCase();
    const invitation = await this.invitations.create({
      ...target,
      email,
      tokenHash: digest(token),
      invitedBy: actor.id,
      expiresAt: new Date(Date.now() + VALID_DAYS * 86_400_000),
    });
    // Awaited: the mail module stores the invitation email durably before the request answers 202.
    await this.events.emitAsync(INVITATION_CREATED, {
      invitationId: invitation.id,
      kind: target.kind,
      email,
      token,
      projectId: target.projectId,
      role: target.role,
      invitedBy: actor.id,
    } satisfies InvitationCreatedEvent);
    this.audit({
      type: 'INVITATION_CREATED',
      actorId: actor.id,
      ip,
      target: target.projectId ? `project:${target.projectId}` : 'workspace',
      details: { invitationId: Number(invitation.id), email, role: target.role },
    });
    return { message: `Invitation sent to ${email}` };
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
