import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export interface QueuedMail {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
}

/** How long a claimed message is reserved for its sender: longer than connect + greeting + socket timeouts. */
const LEASE_SECONDS = 120;

/**
 * The durable queue of outbound mail: a request stores the message and answers; the senders of every
 * replica claim due messages with SKIP LOCKED. A sender that dies mid-send loses only its lease.
 */
@Injectable()
export class MailOutboxRepository {
  constructor(private readonly db: DataSource) {}

  async add(
    mail: { kind: string; recipient: string; subject: string; body: string },
    manager: EntityManager = this.db.manager,
  ): Promise<string> {
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO mail_outbox (kind, recipient, subject, body) VALUES ($1, $2, $3, $4) RETURNING id`,
      [mail.kind, mail.recipient, mail.subject, mail.body],
    );
    return String(rows[0].id);
  }

  async claimDue(limit: number): Promise<QueuedMail[]> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [rows]: [QueuedMail[], number] = await this.db.query(
      `UPDATE mail_outbox SET locked_until = now() + ($2::double precision * interval '1 second')
        WHERE id IN (SELECT id FROM mail_outbox
                      WHERE status = 'PENDING' AND next_attempt_at <= now()
                        AND (locked_until IS NULL OR locked_until < now())
                      ORDER BY next_attempt_at, id
                      LIMIT $1
                      FOR UPDATE SKIP LOCKED)
        RETURNING id::text, kind, recipient, subject, body, attempts`,
      [limit, LEASE_SECONDS],
    );
    return rows;
  }

  /** Sent: the body goes (its links carry tokens), the row stays as a delivery record. */
  async markSent(id: string): Promise<void> {
    await this.db.query(
      `UPDATE mail_outbox SET status = 'SENT', sent_at = now(), body = NULL, locked_until = NULL, attempts = attempts + 1
        WHERE id = $1`,
      [id],
    );
  }

  async retryLater(id: string, delaySeconds: number, error: string, countAttempt: boolean): Promise<void> {
    await this.db.query(
      `UPDATE mail_outbox SET next_attempt_at = now() + ($2::double precision * interval '1 second'), locked_until = NULL,
              last_error = $3, attempts = attempts + $4
        WHERE id = $1`,
      [id, delaySeconds, error.slice(0, 500), countAttempt ? 1 : 0],
    );
  }

  async markFailed(id: string, error: string): Promise<void> {
    await this.db.query(
      `UPDATE mail_outbox SET status = 'FAILED', body = NULL, locked_until = NULL, last_error = $2,
              attempts = attempts + 1
        WHERE id = $1`,
      [id, error.slice(0, 500)],
    );
  }

  /** Delivery records older than `days` are dropped. */
  async prune(days: number): Promise<number> {
    const [rows]: [unknown[], number] = await this.db.query(
      `DELETE FROM mail_outbox WHERE status <> 'PENDING' AND created_at < now() - ($1::integer * interval '1 day') RETURNING id`,
      [days],
    );
    return rows.length;
  }

  async countByStatus(): Promise<Record<string, number>> {
    const rows: { status: string; n: string }[] = await this.db.query(
      `SELECT status, count(*) AS n FROM mail_outbox GROUP BY status`,
    );
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }
}
