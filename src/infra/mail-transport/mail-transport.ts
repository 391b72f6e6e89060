/** One plain-text message, ready to go out. */
export interface OutgoingMail {
  /** Template kind, e.g. `verification`; only for logs. */
  kind: string;
  to: string;
  subject: string;
  text: string;
}

/**
 * Hands a message to the relay. SMTP through nodemailer when SMTP_HOST is set; otherwise the embedded
 * outbox, which writes each message to the log and to SVC_DATA_DIR/outbox/ as an .eml file.
 */
export abstract class MailTransport {
  abstract readonly kind: 'smtp' | 'outbox';

  /** Resolves once the relay accepted the message; rejects with the relay's or the socket's error. */
  abstract send(mail: OutgoingMail): Promise<void>;

  abstract close(): Promise<void>;
}
