import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { PageRequest } from '../common/paging/page.js';

export interface WebhookRow {
  id: string;
  projectId: string;
  url: string;
  events: string[];
  format: 'standard' | 'slack';
  active: boolean;
  secretEncrypted: string;
  failingSince: Date | null;
  deactivatedReason: string | null;
  createdAt: Date;
  lastDelivery: { status: string; statusCode: number | null; at: Date } | null;
}

export interface DeliveryRow {
  id: string;
  webhookId: string;
  event: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** A delivery claimed for sending, with what the sender needs of its webhook. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  projectId: string;
  event: string;
  messageId: string;
  payload: { timestamp: string; projectId: string; data: Record<string, unknown> };
  attempts: number;
  url: string;
  format: 'standard' | 'slack';
  secretEncrypted: string;
  /**
   * The claim: the row's lease end as the claim set it (text, to the microsecond). The outcome of the attempt is
   * recorded only while the row still carries it: a claim that outlived its lease and was taken over by another
   * replica (or reset by a redelivery) records nothing.
   */
  lease: string;
}

const WEBHOOK_COLUMNS = `w.id::text AS "id", w.project_id::text AS "projectId", w.url, w.events, w.format, w.active,
  w.secret_encrypted AS "secretEncrypted", w.failing_since AS "failingSince", w.deactivated_reason AS "deactivatedReason",
  w.created_at AS "createdAt"`;

const LAST_DELIVERY = `(SELECT json_build_object('status', d.status, 'statusCode', d.last_status_code,
    'at', coalesce(d.delivered_at, d.created_at))
    FROM webhook_deliveries d WHERE d.webhook_id = w.id AND (d.attempts > 0 OR d.status <> 'PENDING')
    ORDER BY d.id DESC LIMIT 1) AS "lastDelivery"`;

const DELIVERY_COLUMNS = `id::text AS "id", webhook_id::text AS "webhookId", event, status, attempts,
  last_status_code AS "lastStatusCode", last_error AS "lastError",
  CASE WHEN status = 'PENDING' THEN next_attempt_at END AS "nextAttemptAt",
  created_at AS "createdAt", delivered_at AS "deliveredAt"`;

/** Webhooks and their delivery outbox. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: DataSource) {}

  async projectOfWebhook(id: string): Promise<string | null> {
    const [row]: { project_id: string }[] = await this.db.query(
      `SELECT project_id::text FROM webhooks WHERE id = $1`,
      [id],
    );
    return row?.project_id ?? null;
  }

  /** An id for a webhook about to be created: its secret is encrypted bound to it before the row exists. */
  async nextId(): Promise<string> {
    const [row]: { id: string }[] = await this.db.query(
      `SELECT nextval(pg_get_serial_sequence('webhooks', 'id'))::text AS id`,
    );
    return row.id;
  }

  async create(w: {
    id: string;
    projectId: string;
    url: string;
    events: string[];
    format: string;
    active: boolean;
    secretEncrypted: string;
  }): Promise<WebhookRow> {
    await this.db.query(
      `INSERT INTO webhooks (id, project_id, url, events, format, active, secret_encrypted)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [w.id, w.projectId, w.url, w.events, w.format, w.active, w.secretEncrypted],
    );
    return (await this.find(w.id))!;
  }

  async find(id: string): Promise<WebhookRow | null> {
    const [row]: WebhookRow[] = await this.db.query(
      `SELECT ${WEBHOOK_COLUMNS}, ${LAST_DELIVERY} FROM webhooks w WHERE w.id = $1`,
      [id],
    );
    return row ? withDates(row) : null;
  }

  async list(projectId: string, page: PageRequest<string>): Promise<[WebhookRow[], number]> {
    const order = page.sort
      .map((s) => `w.${s.field === 'createdAt' ? 'created_at' : 'id'} ${s.direction}`)
      .join(', ');
    const rows: WebhookRow[] = await this.db.query(
      `SELECT ${WEBHOOK_COLUMNS}, ${LAST_DELIVERY} FROM webhooks w WHERE w.project_id = $1
        ORDER BY ${order}, w.id LIMIT $2 OFFSET $3`,
      [projectId, page.size, page.offset],
    );
    const [{ n }]: { n: number }[] = await this.db.query(
      `SELECT count(*)::int AS n FROM webhooks WHERE project_id = $1`,
      [projectId],
    );
    return [rows.map(withDates), n];
  }

  async update(
    id: string,
    patch: { url?: string; events?: string[]; format?: string; active?: boolean },
  ): Promise<WebhookRow | null> {
    await this.db.query(
      `UPDATE webhooks SET url = coalesce($2, url), events = coalesce($3, events), format = coalesce($4, format),
              active = coalesce($5, active),
              -- Turned on again: its failures so far no longer count towards the 24 hours.
              failing_since = CASE WHEN $5 AND NOT active THEN NULL ELSE failing_since END,
              deactivated_reason = CASE WHEN $5 THEN NULL ELSE deactivated_reason END,
              updated_at = now()
        WHERE id = $1`,
      [id, patch.url ?? null, patch.events ?? null, patch.format ?? null, patch.active ?? null],
    );
    return this.find(id);
  }

  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM webhooks WHERE id = $1`, [id]);
  }

  /**
   * One delivery per active webhook of the project subscribed to `event`, unless one with the same key exists
   * (an event enqueued twice is delivered once). Answers how many were added.
   */
  async enqueue(
    manager: EntityManager,
    e: { projectId: string; event: string; key: string; payload: object; webhookId?: string },
  ): Promise<number> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO webhook_deliveries (webhook_id, event, event_key, message_id, payload)
       SELECT id, $2::text, $3::text, 'msg_' || replace(gen_random_uuid()::text, '-', ''), $4::jsonb
         FROM webhooks
        WHERE project_id = $1 AND active AND ($5::bigint IS NOT NULL AND id = $5::bigint OR $5::bigint IS NULL AND $2::text = ANY (events))
       ON CONFLICT (webhook_id, event_key) DO NOTHING
       RETURNING id`,
      [e.projectId, e.event, e.key, JSON.stringify(e.payload), e.webhookId ?? null],
    );
    return rows.length;
  }

  async deliveries(webhookId: string, page: PageRequest<string>): Promise<[DeliveryRow[], number]> {
    const order = page.sort
      .map((s) => `${s.field === 'createdAt' ? 'created_at' : 'id'} ${s.direction}`)
      .join(', ');
    const rows: DeliveryRow[] = await this.db.query(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY ${order}, id DESC LIMIT $2 OFFSET $3`,
      [webhookId, page.size, page.offset],
    );
    const [{ n }]: { n: number }[] = await this.db.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`,
      [webhookId],
    );
    return [rows, n];
  }

  /** Due again at once with a fresh set of attempts, under the same webhook-id; false when not the webhook's. */
  async redeliver(webhookId: string, deliveryId: string): Promise<boolean> {
    const [rows]: [unknown[], number] = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'PENDING', attempts = 0, next_attempt_at = now(), locked_until = NULL,
              delivered_at = NULL
        WHERE id = $1 AND webhook_id = $2 RETURNING id`,
      [deliveryId, webhookId],
    );
    return rows.length > 0;
  }

  async claimDue(limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    const [rows]: [ClaimedDelivery[], number] = await this.db.query(
      `UPDATE webhook_deliveries d SET locked_until = now() + ($2::double precision * interval '1 second')
         FROM webhooks w
        WHERE w.id = d.webhook_id
          AND d.id IN (SELECT d2.id FROM webhook_deliveries d2 JOIN webhooks w2 ON w2.id = d2.webhook_id
                        WHERE d2.status = 'PENDING' AND d2.next_attempt_at <= now()
                          AND (d2.locked_until IS NULL OR d2.locked_until < now()) AND w2.active
                        ORDER BY d2.next_attempt_at, d2.id
                        LIMIT $1
                        FOR UPDATE OF d2 SKIP LOCKED)
        RETURNING d.id::text AS "id", d.webhook_id::text AS "webhookId", w.project_id::text AS "projectId", d.event,
                  d.message_id AS "messageId", d.payload, d.attempts, w.url, w.format,
                  w.secret_encrypted AS "secretEncrypted", d.locked_until::text AS "lease"`,
      [limit, leaseSeconds],
    );
    return rows;
  }

  /** Records a delivered attempt; false when the claim was lost meanwhile (nothing recorded). */
  async markDelivered(d: ClaimedDelivery, statusCode: number): Promise<boolean> {
    const [rows]: [unknown[], number] = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'DELIVERED', delivered_at = now(), attempts = attempts + 1,
              last_status_code = $2, last_error = NULL, locked_until = NULL
        WHERE id = $1 AND locked_until = $3::timestamptz
        RETURNING id`,
      [d.id, statusCode, d.lease],
    );
    if (!rows.length) {
      return false;
    }
    await this.db.query(
      `UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`,
      [d.webhookId],
    );
    return true;
  }

  /**
   * A failed attempt: FAILED when `final` or when it was the last of `maxAttempts`, else due again after
   * `retryBaseSeconds` doubled for each attempt before it (counted in the row, whatever the claim saw). Answers
   * whether it was given up and since when the webhook has been failing without a success in between; undefined
   * when the claim was lost meanwhile (nothing recorded).
   */
  async markAttemptFailed(
    d: ClaimedDelivery,
    outcome: {
      statusCode: number | null;
      error: string;
      final: boolean;
      maxAttempts: number;
      retryBaseSeconds: number;
    },
  ): Promise<{ givenUp: boolean; attempts: number; failingSince: Date } | undefined> {
    const [[row]]: [{ status: string; attempts: number }[], number] = await this.db.query(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_status_code = $2, last_error = $3, locked_until = NULL,
              status = CASE WHEN $4 OR attempts + 1 >= $5 THEN 'FAILED' ELSE 'PENDING' END,
              next_attempt_at = CASE WHEN $4 OR attempts + 1 >= $5 THEN next_attempt_at
                                     ELSE now() + ($6::double precision * power(2, attempts) * interval '1 second') END
        WHERE id = $1 AND locked_until = $7::timestamptz
        RETURNING status, attempts`,
      [
        d.id,
        outcome.statusCode,
        outcome.error.slice(0, 500),
        outcome.final,
        outcome.maxAttempts,
        outcome.retryBaseSeconds,
        d.lease,
      ],
    );
    if (!row) {
      return undefined;
    }
    const [[hook]]: [{ since: Date }[], number] = await this.db.query(
      `UPDATE webhooks SET failing_since = coalesce(failing_since, now()) WHERE id = $1 RETURNING failing_since AS since`,
      [d.webhookId],
    );
    return {
      givenUp: row.status !== 'PENDING',
      attempts: row.attempts,
      failingSince: hook?.since ?? new Date(),
    };
  }

  /** Turns the webhook off; true for the one caller that did (another replica may race to it). */
  async deactivate(manager: EntityManager, webhookId: string, reason: string): Promise<boolean> {
    const [rows]: [unknown[], number] = await manager.query(
      `UPDATE webhooks SET active = false, deactivated_reason = $2, updated_at = now() WHERE id = $1 AND active RETURNING id`,
      [webhookId, reason.slice(0, 200)],
    );
    return rows.length > 0;
  }

  /** Delivered and failed deliveries older than `days` are dropped. */
  async prune(days: number): Promise<number> {
    const [rows]: [unknown[], number] = await this.db.query(
      `DELETE FROM webhook_deliveries WHERE status <> 'PENDING' AND created_at < now() - ($1::integer * interval '1 day') RETURNING id`,
      [days],
    );
    return rows.length;
  }

  /** Deliveries due now for active webhooks (the outbox's backlog, for /metrics). */
  async countDue(): Promise<number> {
    const [{ n }]: { n: number }[] = await this.db.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status = 'PENDING' AND d.next_attempt_at <= now() AND w.active`,
    );
    return n;
  }

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}

function withDates(row: WebhookRow): WebhookRow {
  const last = row.lastDelivery as unknown as {
    status: string;
    statusCode: number | null;
    at: string;
  } | null;
  return { ...row, lastDelivery: last ? { ...last, at: new Date(last.at) } : null };
}
