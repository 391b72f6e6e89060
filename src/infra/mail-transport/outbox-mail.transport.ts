import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import type StreamTransport from 'nodemailer/lib/stream-transport/index.js';
import type { Mailbox } from '../../config/mailbox.js';
import { MailTransport, OutgoingMail } from './mail-transport.js';

/**
 * The embedded counterpart of a relay (SMTP_HOST unset): each message is built exactly as it would be
 * sent, written to `dir` as an .eml file and printed to the log, so a developer running `npm start` can
 * follow a verification or reset link. Nothing leaves the machine.
 */
export class OutboxMailTransport extends MailTransport {
  readonly kind = 'outbox' as const;
  private readonly logger = new Logger('MailOutbox');
  private readonly builder: Transporter<StreamTransport.SentMessageInfo>;
  private sequence = 0;

  constructor(
    private readonly dir: string,
    private readonly from: Mailbox,
  ) {
    super();
    this.builder = createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.builder.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = join(this.dir, `${stamp}-${process.pid}-${++this.sequence}-${mail.kind}.eml`);
    // Written aside and renamed into place: whoever watches the folder (a developer, a test) never reads a
    // message half-written (a reader that found the .eml before its bytes were there saw an empty message).
    await writeFile(`${file}.part`, info.message as Buffer, { mode: 0o600 });
    await rename(`${file}.part`, file);
    this.logger.log(`Message for ${mail.to} written to ${file} (no SMTP_HOST set):\n${mail.text}`);
  }

  async close(): Promise<void> {}
}
