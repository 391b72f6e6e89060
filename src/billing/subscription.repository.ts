import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { SubscriptionStatus } from './dto/subscription.dto.js';

export interface Subscription {
  plan: string;
  seats: number;
  periodEnd: Date;
  status: SubscriptionStatus;
}

type Row = { plan: string; seats: number; period_end: Date; status: SubscriptionStatus };
const toSubscription = (r: Row): Subscription => ({ plan: r.plan, seats: r.seats, periodEnd: r.period_end, status: r.status });

/** The workspace's one subscription row, the seats in use, and the record of billing notices sent. */
@Injectable()
export class SubscriptionRepository {
  constructor(private readonly db: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async get(manager: EntityManager = this.db.manager, lock = false): Promise<Subscription> {
    const [row]: Row[] = await manager.query(
      `SELECT plan, seats, period_end, status FROM workspace_subscription WHERE id = 1${lock ? ' FOR UPDATE' : ''}`,
    );
    return toSubscription(row);
  }

  async save(manager: EntityManager, s: Subscription): Promise<void> {
    await manager.query(
      `UPDATE workspace_subscription SET plan = $1, seats = $2, period_end = $3, status = $4, updated_at = now() WHERE id = 1`,
      [s.plan, s.seats, s.periodEnd, s.status],
    );
  }

  /** Accounts that can sign in: enabled, with a password or from the directory. */
  async seatsUsed(manager: EntityManager = this.db.manager): Promise<number> {
    const [row]: { n: string }[] = await manager.query(
      `SELECT count(*) AS n FROM users WHERE enabled AND (password_hash IS NOT NULL OR auth_source <> 'LOCAL')`,
    );
    return Number(row.n);
  }

  /** Open invitations for addresses that have no account yet: each would take a seat when accepted. */
  async seatsInvited(manager: EntityManager = this.db.manager): Promise<number> {
    const [row]: { n: string }[] = await manager.query(
      `SELECT count(DISTINCT i.email) AS n FROM invitations i
        WHERE i.accepted_at IS NULL AND i.expires_at > now()
          AND NOT EXISTS (SELECT 1 FROM users u WHERE u.email = i.email)`,
    );
    return Number(row.n);
  }

  /** Records a notice; true only for the first caller, so each notice goes out once across replicas. */
  async claimNotice(manager: EntityManager, kind: string, dedupeKey: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO billing_notices (kind, dedupe_key) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING kind`,
      [kind, dedupeKey],
    );
    return rows.length === 1;
  }

  async adminEmails(manager: EntityManager = this.db.manager): Promise<string[]> {
    const rows: { email: string }[] = await manager.query(`SELECT email FROM users WHERE admin AND enabled ORDER BY id`);
    return rows.map((r) => r.email);
  }
}
