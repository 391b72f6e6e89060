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
  /** Normally derived from the port (465 implicit, 587 STARTTLS required, others STARTTLS when offered). */
  tls?: SmtpTlsMode;
}

export type SmtpTlsMode = 'implicit' | 'starttls-required' | 'starttls-if-offered';

export function tlsModeOf(port: number): SmtpTlsMode {
  return port === 465 ? 'implicit' : port === 587 ? 'starttls-required' : 'starttls-if-offered';
}

/**
 * nodemailer options for the spec's port rules: 465 implicit TLS; 587 STARTTLS required; no AUTH at all
 * with empty credentials (nodemailer would otherwise try AUTH with empty strings); any other port
 * upgrades with STARTTLS when the relay offers it.
 */
export function smtpOptions(settings: SmtpSettings): SMTPTransport.Options {
  const tls = settings.tls ?? tlsModeOf(settings.port);
  const options: SMTPTransport.Options = {
    host: settings.host,
    port: settings.port,
    secure: tls === 'implicit',
    requireTLS: tls === 'starttls-required',
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

  close(): Promise<void> {
    this.transporter.close();
    return Promise.resolve();
  }
}
