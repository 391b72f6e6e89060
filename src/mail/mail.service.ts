import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { EntityManager } from 'typeorm';
import { AppError } from '../common/app-error.js';
import { AppConfig } from '../config/app-config.js';
import { parseMailbox } from '../config/mailbox.js';
import { KeyValueStore } from '../infra/kv/key-value-store.js';
import { Metrics } from '../health/metrics.js';
import { MailOutboxRepository } from './mail-outbox.repository.js';
import { MailKind, MailKinds, renderMail } from './mail-templates.js';

/** Emitted after a message was stored: the local sender picks it up at once instead of at its next poll. */
export const MAIL_QUEUED = 'mail.queued';

const HOUR = 3600;

/**
 * What features call to send mail. `queue` renders the template, applies the per-recipient limit
 * (counted in the key-value store, so it holds across replicas) and stores the message durably; it never
 * waits for the relay. Over the limit the message is dropped with one WARN line and no error.
 */
@Injectable()
export class MailService {
  private readonly logger = new Logger(MailService.name);

  constructor(
    private readonly outbox: MailOutboxRepository,
    private readonly kv: KeyValueStore,
    private readonly config: AppConfig,
    private readonly events: EventEmitter2,
    private readonly metrics: Metrics,
  ) {}

  /** Stores the message for sending; false when the per-recipient limit dropped it. */
  async queue<K extends MailKind>(
    kind: K,
    to: string,
    values: MailKinds[K],
    manager?: EntityManager,
  ): Promise<boolean> {
    const recipient = to.trim().toLowerCase();
    const mailbox = parseMailbox(recipient);
    if (!mailbox || mailbox.name !== undefined) {
      // Validation at the door refuses such addresses; reaching this is a programming error.
      throw AppError.validation(`${JSON.stringify(to)} is not a valid recipient address`);
    }
    const limit = this.config.mail.perRecipientPerHour;
    const count = await this.kv.incrementWithTtl(`mail-rate:${recipient}`, HOUR);
    if (count > limit) {
      this.metrics.mailDropped.inc();
      this.logger.warn(`Mail dropped: ${kind} to ${recipient}: the limit of ${limit} messages per recipient per hour is reached`);
      return false;
    }
    const content = renderMail(kind, { productName: this.config.mail.productName, baseUrl: this.config.http.baseUrl }, values);
    await this.outbox.add({ kind, recipient, subject: content.subject, body: content.text }, manager);
    this.events.emit(MAIL_QUEUED);
    return true;
  }
}
