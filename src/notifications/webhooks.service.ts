import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { AUDIT_EVENT, type AuditRecord } from '../audit/audit.events.js';
import { AppError } from '../common/app-error.js';
import type { AuthUser } from '../common/auth-user.js';
import { Page, pageRequest, toPage } from '../common/paging/page.js';
import type { PageQueryDto } from '../common/paging/page-query.dto.js';
import { AppConfig } from '../config/app-config.js';
import { checkTarget, RefusedAddressError } from './address-policy.js';
import type {
  CreatedWebhookDto,
  CreateWebhookDto,
  DeliveryDto,
  UpdateWebhookDto,
  WebhookDto,
} from './dto/webhooks.dto.js';
import { NotificationOutbox } from './notification-outbox.js';
import { NOTIFICATION_TYPES } from './notification.events.js';
import { newWebhookSecret } from './webhook-http.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { DeliveryRow, WebhookRow, WebhooksRepository } from './webhooks.repository.js';

/** A project's webhooks (MAINTAINER): their rules; the roles are checked on the routes. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly secrets: WebhookSecrets,
    private readonly outbox: NotificationOutbox,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
  ) {}

  async create(
    user: AuthUser,
    projectId: string,
    dto: CreateWebhookDto,
    ip: string,
  ): Promise<CreatedWebhookDto> {
    const url = await this.checkedUrl(dto.url);
    const events = checkedEvents(dto.events);
    const id = await this.webhooks.nextId();
    const secret = newWebhookSecret();
    const row = await this.webhooks.create({
      id,
      projectId,
      url,
      events,
      format: dto.format ?? 'standard',
      active: dto.active ?? true,
      secretEncrypted: this.secrets.encrypt(secret, id),
    });
    this.audit('WEBHOOK_CREATED', user, projectId, ip, {
      webhookId: Number(id),
      url,
      events,
      format: row.format,
    });
    return { ...toWebhookDto(row), secret };
  }

  async list(projectId: string, query: PageQueryDto): Promise<Page<WebhookDto>> {
    const page = pageRequest(query, ['id', 'createdAt'] as const, [{ field: 'id', direction: 'ASC' }]);
    const [rows, total] = await this.webhooks.list(projectId, page);
    return toPage(rows.map(toWebhookDto), total, page);
  }

  async get(webhookId: string): Promise<WebhookDto> {
    return toWebhookDto(await this.found(webhookId));
  }

  async update(user: AuthUser, webhookId: string, dto: UpdateWebhookDto, ip: string): Promise<WebhookDto> {
    const before = await this.found(webhookId);
    const patch = {
      url: dto.url === undefined ? undefined : await this.checkedUrl(dto.url),
      events: dto.events === undefined ? undefined : checkedEvents(dto.events),
      format: dto.format,
      active: dto.active,
    };
    const row = (await this.webhooks.update(webhookId, patch))!;
    const changed = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    this.audit('WEBHOOK_UPDATED', user, before.projectId, ip, { webhookId: Number(webhookId), changed });
    return toWebhookDto(row);
  }

  async delete(user: AuthUser, webhookId: string, ip: string): Promise<void> {
    const before = await this.found(webhookId);
    await this.webhooks.delete(webhookId);
    this.audit('WEBHOOK_DELETED', user, before.projectId, ip, {
      webhookId: Number(webhookId),
      url: before.url,
    });
  }

  async test(webhookId: string): Promise<void> {
    const webhook = await this.found(webhookId);
    if (!webhook.active) {
      throw AppError.conflict(
        `Webhook ${webhookId} is turned off; turn it on (PATCH active: true) to test it`,
      );
    }
    await this.outbox.ping(webhook.projectId, webhookId);
  }

  async deliveries(webhookId: string, query: PageQueryDto): Promise<Page<DeliveryDto>> {
    await this.found(webhookId);
    const page = pageRequest(query, ['id', 'createdAt'] as const, [{ field: 'id', direction: 'DESC' }]);
    const [rows, total] = await this.webhooks.deliveries(webhookId, page);
    return toPage(rows.map(toDeliveryDto), total, page);
  }

  async redeliver(webhookId: string, deliveryId: string): Promise<void> {
    const webhook = await this.found(webhookId);
    if (!/^\d{1,18}$/.test(deliveryId) || !(await this.webhooks.redeliver(webhookId, deliveryId))) {
      throw AppError.notFound(`Delivery ${deliveryId} of webhook ${webhookId} not found`);
    }
    if (!webhook.active) {
      // Kept due: it goes out as soon as the webhook is turned on again.
      return;
    }
    this.outbox.wakeSenders();
  }

  private async found(webhookId: string): Promise<WebhookRow> {
    const row = await this.webhooks.find(webhookId);
    if (!row) {
      throw AppError.notFound(`Webhook ${webhookId} not found`);
    }
    return row;
  }

  private async checkedUrl(url: string): Promise<string> {
    try {
      return (await checkTarget(url.trim(), this.config.webhooks.allowPrivate)).url.toString();
    } catch (error) {
      if (error instanceof RefusedAddressError) {
        throw AppError.validation(error.message);
      }
      throw error;
    }
  }

  private audit(
    type: AuditRecord['type'],
    user: AuthUser,
    projectId: string,
    ip: string,
    details: Record<string, unknown>,
  ) {
    const record: AuditRecord = { type, actorId: user.id, ip, target: `project:${projectId}`, details };
    this.events.emit(AUDIT_EVENT, record);
  }
}

function checkedEvents(events: string[]): string[] {
  const unknown = events.filter((e) => !(NOTIFICATION_TYPES as readonly string[]).includes(e));
  if (unknown.length) {
    throw AppError.validation(
      `events: unknown ${unknown.length === 1 ? 'event' : 'events'} ${unknown.map((e) => `'${e.slice(0, 60)}'`).join(', ')}; use ${NOTIFICATION_TYPES.join(', ')}`,
    );
  }
  return [...new Set(events)];
}

export function toWebhookDto(r: WebhookRow): WebhookDto {
  return {
    id: Number(r.id),
    projectId: Number(r.projectId),
    url: r.url,
    events: r.events,
    format: r.format,
    active: r.active,
    deactivatedReason: r.deactivatedReason,
    lastDelivery: r.lastDelivery
      ? {
          status: r.lastDelivery.status,
          statusCode: r.lastDelivery.statusCode,
          at: r.lastDelivery.at.toISOString(),
        }
      : null,
    createdAt: r.createdAt.toISOString(),
  };
}

function toDeliveryDto(r: DeliveryRow): DeliveryDto {
  return {
    id: Number(r.id),
    event: r.event,
    status: r.status,
    attempts: r.attempts,
    lastStatusCode: r.lastStatusCode,
    lastError: r.lastError,
    nextAttemptAt: r.nextAttemptAt ? new Date(r.nextAttemptAt).toISOString() : null,
    createdAt: new Date(r.createdAt).toISOString(),
    deliveredAt: r.deliveredAt ? new Date(r.deliveredAt).toISOString() : null,
  };
}
