import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import { INVITATION_CREATED } from '../access/access.events.js';
import type { InvitationCreatedEvent } from '../access/access.events.js';
import { AUDIT_EVENT, AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { AppConfig } from '../config/app-config.js';
import { MailService } from '../mail/mail.service.js';
import type { MailKind, MailKinds } from '../mail/mail-templates.js';
import type { BillingEventDto, SubscriptionDto, SubscriptionStatus, UpdateSubscriptionDto } from './dto/subscription.dto.js';
import { Subscription, SubscriptionRepository } from './subscription.repository.js';

const DAY_MS = 86_400_000;
const REMINDER_DAYS = [3, 14] as const;

/**
 * The workspace subscription and its notices to platform admins: renewal reminders (14 and 3 days before
 * the period ends), expiry, failed and succeeded payments, and the seat limit. Each notice is recorded in
 * billing_notices in the same transaction that stores its mail, so it goes out once across replicas.
 */
@Injectable()
export class BillingService {
  private readonly logger = new Logger(BillingService.name);

  constructor(
    private readonly subscriptions: SubscriptionRepository,
    private readonly mail: MailService,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
  ) {}

  async get(): Promise<SubscriptionDto> {
    const [subscription, seatsUsed] = await Promise.all([this.subscriptions.get(), this.subscriptions.seatsUsed()]);
    return toDto(subscription, seatsUsed);
  }

  async update(dto: UpdateSubscriptionDto, actor: AuthUser, ip: string): Promise<SubscriptionDto> {
    const changed = await this.change((current) => ({
      plan: dto.plan ?? current.plan,
      seats: dto.seats ?? current.seats,
      periodEnd: dto.periodEnd ? new Date(dto.periodEnd) : current.periodEnd,
      status: dto.status ?? current.status,
    }));
    this.audit({
      type: 'SUBSCRIPTION_CHANGED',
      actorId: actor.id,
      ip,
      target: 'subscription',
      details: { before: plain(changed.before), after: plain(changed.after) },
    });
    return this.get();
  }

  /** A billing provider's event; the signature is the HMAC-SHA256 of the raw body with the webhook secret. */
  verifySignature(rawBody: Buffer | undefined, signature: string | undefined): void {
    const secret = this.config.billing.webhookSecret;
    if (!secret) {
      throw AppError.unauthenticated('Billing events are not accepted: SVC_BILLING_WEBHOOK_SECRET is not set');
    }
    const given = (signature ?? '').trim().replace(/^sha256=/i, '');
    const expected = createHmac('sha256', secret)
      .update(rawBody ?? Buffer.alloc(0))
      .digest();
    const presented = /^[0-9a-f]{64}$/i.test(given) ? Buffer.from(given, 'hex') : Buffer.alloc(0);
    if (!rawBody || presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw AppError.unauthenticated('The X-Signature header does not match the body');
    }
  }

  async handleEvent(event: BillingEventDto): Promise<void> {
    const periodEnd = event.periodEnd ? new Date(event.periodEnd) : undefined;
    await this.subscriptions.transaction(async (tx) => {
      if (event.id && !(await this.subscriptions.claimNotice(tx, 'webhook-event', event.id))) {
        return; // a provider retry of an event already applied
      }
      const current = await this.subscriptions.get(tx, true);
      const next: Subscription = { ...current, periodEnd: periodEnd ?? current.periodEnd };
      switch (event.type) {
        case 'payment.succeeded':
        case 'subscription.renewed':
          next.status = 'ACTIVE';
          break;
        case 'payment.failed':
          next.status = 'PAST_DUE';
          break;
        case 'subscription.expired':
          next.status = 'EXPIRED';
          break;
      }
      await this.subscriptions.save(tx, next);
      if (event.type === 'payment.succeeded') {
        // A receipt for every payment, also when the status was already ACTIVE.
        await this.notifyAdmins(tx, 'payment-succeeded', {
          plan: next.plan,
          periodEnd: next.periodEnd,
          amount: event.amount,
          invoiceId: event.invoiceId,
        });
      } else if (event.type === 'payment.failed') {
        await this.notifyAdmins(tx, 'payment-failed', { plan: next.plan, reason: event.reason });
      } else if (current.status !== next.status) {
        await this.statusNotice(tx, current, next);
      }
    });
    this.audit({ type: 'SUBSCRIPTION_CHANGED', target: 'subscription', details: { source: 'billing webhook', event: event.type, id: event.id } });
  }

  /**
   * The scheduled check (every replica runs it; each notice goes out once): renewal reminders when the
   * period ends within 14 and within 3 days, and expiry once the period has ended.
   */
  async checkSubscription(now = new Date()): Promise<void> {
    await this.subscriptions.transaction(async (tx) => {
      const current = await this.subscriptions.get(tx, true);
      if (current.status === 'EXPIRED') {
        return;
      }
      const msLeft = current.periodEnd.getTime() - now.getTime();
      if (msLeft <= 0) {
        const next: Subscription = { ...current, status: 'EXPIRED' };
        await this.subscriptions.save(tx, next);
        await this.statusNotice(tx, current, next);
        this.logger.warn(`The subscription expired at ${current.periodEnd.toISOString()}`);
        return;
      }
      const days = REMINDER_DAYS.find((d) => msLeft <= d * DAY_MS);
      if (days && (await this.subscriptions.claimNotice(tx, `renewal-reminder-${days}`, current.periodEnd.toISOString()))) {
        await this.notifyAdmins(tx, 'renewal-reminder', {
          plan: current.plan,
          periodEnd: current.periodEnd,
          daysLeft: Math.ceil(msLeft / DAY_MS),
        });
      }
    });
  }

  /** An invitation that would take the workspace past its seats tells the admins (once a day). */
  @OnEvent(INVITATION_CREATED, { async: true, promisify: true })
  async invitationCreated(event: InvitationCreatedEvent): Promise<void> {
    try {
      await this.subscriptions.transaction(async (tx) => {
        const [subscription, used, invited] = [
          await this.subscriptions.get(tx),
          await this.subscriptions.seatsUsed(tx),
          await this.subscriptions.seatsInvited(tx),
        ];
        if (used + invited <= subscription.seats) {
          return;
        }
        if (await this.subscriptions.claimNotice(tx, 'seat-limit-reached', new Date().toISOString().slice(0, 10))) {
          this.logger.warn(`Seat limit reached: ${used} used and ${invited} invited of ${subscription.seats} seats`);
          await this.notifyAdmins(tx, 'seat-limit-reached', {
            seats: subscription.seats,
            seatsUsed: used,
            invitedEmail: event.email,
          });
        }
      });
    } catch (error) {
      this.logger.error(`Seat check after invitation ${event.invitationId} failed: ${(error as Error).message}`);
    }
  }

  private async change(next: (current: Subscription) => Subscription): Promise<{ before: Subscription; after: Subscription }> {
    return this.subscriptions.transaction(async (tx) => {
      const before = await this.subscriptions.get(tx, true);
      const after = next(before);
      await this.subscriptions.save(tx, after);
      if (before.status !== after.status) {
        await this.statusNotice(tx, before, after);
      }
      return { before, after };
    });
  }

  /** The notice that goes with a status change: PAST_DUE a failed payment, ACTIVE a receipt, EXPIRED the expiry. */
  private async statusNotice(tx: EntityManager, before: Subscription, after: Subscription): Promise<void> {
    const next: SubscriptionStatus = after.status;
    if (next === 'PAST_DUE') {
      await this.notifyAdmins(tx, 'payment-failed', { plan: after.plan });
    } else if (next === 'ACTIVE' && before.status !== 'ACTIVE') {
      await this.notifyAdmins(tx, 'payment-succeeded', { plan: after.plan, periodEnd: after.periodEnd });
    } else if (next === 'EXPIRED' && (await this.subscriptions.claimNotice(tx, 'subscription-expired', after.periodEnd.toISOString()))) {
      await this.notifyAdmins(tx, 'subscription-expired', { plan: after.plan, periodEnd: after.periodEnd });
    }
  }

  private async notifyAdmins<K extends MailKind>(tx: EntityManager, kind: K, values: MailKinds[K]): Promise<void> {
    for (const email of await this.subscriptions.adminEmails(tx)) {
      await this.mail.queue(kind, email, values, tx);
    }
  }

  private audit(record: AuditRecord): void {
    this.events.emit(AUDIT_EVENT, record);
  }
}

function toDto(s: Subscription, seatsUsed: number): SubscriptionDto {
  return { plan: s.plan, seats: s.seats, seatsUsed, periodEnd: s.periodEnd.toISOString(), status: s.status };
}

function plain(s: Subscription): Record<string, unknown> {
  return { plan: s.plan, seats: s.seats, periodEnd: s.periodEnd.toISOString(), status: s.status };
}
