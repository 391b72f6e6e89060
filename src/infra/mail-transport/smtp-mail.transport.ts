import { createTransport, Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Mailbox } from '../../config/mailbox.js';
import { MailTransport, OutgoingMail } from './mail-transport.js';

/** Connect, greeting (read) and socket (write) timeouts: nodemailer's own defaults are minutes. */
export const SMTP_TIMEOUT_MS = 10_000;

export interface SmtpSettings {
  host: string;
  port: number;
  user?: string;
  pass?: string;
  rejectUnauthorized: boolean;
}

/**
 * nodemailer options for the spec's port rules: 465 implicit TLS; 587 STARTTLS required; no AUTH at all
 * with empty credentials (nodemailer would otherwise try AUTH with empty strings); any other port
 * upgrades with STARTTLS when the relay offers it.
 */
export function smtpOptions(settings: SmtpSettings): SMTPTransport.Options {
  const options: SMTPTransport.Options = {
    host: settings.host,
    port: settings.port,
    secure: settings.port === 465,
    requireTLS: settings.port === 587,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
    dnsTimeout: SMTP_TIMEOUT_MS,
    tls: { rejectUnauthorized: settings.rejectUnauthorized, minVersion: 'TLSv1.2' },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  if (settings.user && settings.pass) {
    options.auth = { user: settings.user, pass: settings.pass };
  }
  return options;
}

/** The real relay. One connection per message: transactional mail is rare and pools hide dead sockets. */
export class SmtpMailTransport extends MailTransport {
  readonly kind = 'smtp' as const;
  private readonly transporter: Transporter<SMTPTransport.SentMessageInfo>;

  constructor(
    settings: SmtpSettings,
    private readonly from: Mailbox,
  ) {
    super();
    this.transporter = createTransport(smtpOptions(settings));
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transporter.sendMail({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  async close(): Promise<void> {
    this.transporter.close();
  }
}
