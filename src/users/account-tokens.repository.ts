import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export type AccountTokenPurpose = 'VERIFY_EMAIL' | 'RESET_PASSWORD';

export interface AccountTokenOwner {
  tokenId: string;
  userId: string;
  email: string;
}

/** One-time tokens of registration and password reset, stored as SHA-256 only. */
@Injectable()
export class AccountTokensRepository {
  constructor(private readonly db: DataSource) {}

  /** Stores a new token and retires the user's earlier unused ones of the same purpose: the newest link wins. */
  async replace(userId: string, purpose: AccountTokenPurpose, tokenHash: string, validSeconds: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE account_tokens SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL`,
        [userId, purpose],
      );
      await tx.query(
        `INSERT INTO account_tokens (user_id, purpose, token_hash, expires_at)
         VALUES ($1, $2, $3, now() + ($4::double precision * interval '1 second'))`,
        [userId, purpose, tokenHash, validSeconds],
      );
    });
  }

  /** The token's user while the token is unused and unexpired, without using it up. */
  async peek(purpose: AccountTokenPurpose, tokenHash: string): Promise<AccountTokenOwner | null> {
    const rows: { id: string; user_id: string; email: string }[] = await this.db.query(
      `SELECT t.id, t.user_id, u.email FROM account_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = $1 AND t.purpose = $2 AND t.used_at IS NULL AND t.expires_at > now() AND u.enabled`,
      [tokenHash, purpose],
    );
    return rows[0] ? { tokenId: String(rows[0].id), userId: String(rows[0].user_id), email: rows[0].email } : null;
  }

  /** Uses the token up; false when another request used it first. */
  async consume(tx: EntityManager, tokenId: string): Promise<boolean> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [used]: [unknown[], number] = await tx.query(
      `UPDATE account_tokens SET used_at = now() WHERE id = $1 AND used_at IS NULL AND expires_at > now() RETURNING id`,
      [tokenId],
    );
    return used.length === 1;
  }

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }
}
