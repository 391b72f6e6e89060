import { Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { DataSource } from 'typeorm';
import { INVITATION_CREATED } from '../access/access.events.js';
import type { InvitationCreatedEvent } from '../access/access.events.js';
import { SECURITY_NOTICE } from '../users/account.events.js';
import type { SecurityNoticeEvent } from '../users/account.events.js';
import { MailService } from './mail.service.js';

const INVITATION_VALID_DAYS = 7;

/** Turns other features' domain events into mail; a failure here is logged, never thrown at the emitter. */
@Injectable()
export class MailListeners {
  private readonly logger = new Logger(MailListeners.name);

  constructor(
    private readonly mail: MailService,
    private readonly db: DataSource,
  ) {}

  @OnEvent(INVITATION_CREATED, { async: true, promisify: true })
  async invitationCreated(event: InvitationCreatedEvent): Promise<void> {
    try {
      const [inviter]: { full_name: string; email: string }[] = await this.db.query(
        `SELECT full_name, email FROM users WHERE id = $1`,
        [event.invitedBy],
      );
      const invitedBy = inviter ? `${inviter.full_name} (${inviter.email})` : 'An administrator';
      await this.db.transaction(async (tx) => {
        if (event.kind === 'PROJECT') {
          const [project]: { name: string; key: string }[] = await tx.query(`SELECT name, key FROM projects WHERE id = $1`, [
            event.projectId,
          ]);
          await this.mail.queue(
            'project-invitation',
            event.email,
            {
              projectName: project?.name ?? 'a project',
              projectKey: project?.key ?? '',
              role: event.role ?? 'VIEWER',
              invitedBy,
              token: event.token,
              validDays: INVITATION_VALID_DAYS,
            },
            tx,
          );
        } else {
          await this.mail.queue(
            'workspace-invitation',
            event.email,
            { invitedBy, token: event.token, validDays: INVITATION_VALID_DAYS },
            tx,
          );
        }
        await tx.query(`UPDATE invitations SET mailed_at = now() WHERE id = $1`, [event.invitationId]);
      });
    } catch (error) {
      this.logger.error(`The invitation email for invitation ${event.invitationId} was not queued: ${(error as Error).message}`);
    }
  }

  @OnEvent(SECURITY_NOTICE, { async: true, promisify: true })
  async securityNotice(event: SecurityNoticeEvent): Promise<void> {
    try {
      await this.mail.queue('security-notice', event.email, {
        fullName: event.fullName,
        change: event.kind,
        at: event.at,
        ip: event.ip,
      });
    } catch (error) {
      this.logger.error(`The security notice for user ${event.userId} was not queued: ${(error as Error).message}`);
    }
  }
}
