import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface TwoFactorRow {
  secretEncrypted: string;
  active: boolean;
  lastUsedStep: number | null;
}

/** TypeORM answers UPDATE and DELETE with [rows, affected]. */
type Changed = [unknown[], number];

/**
 * The TOTP secret and recovery codes of each user. Every state change is one conditional statement (or one
 * transaction), so two replicas racing on one user cannot both win: a time step is used once, a recovery code
 * once, and an activation or disable happens once.
 */
@Injectable()
export class TwoFactorRepository {
  constructor(private readonly db: DataSource) {}

  async find(userId: string): Promise<TwoFactorRow | null> {
    const rows: { secret_encrypted: string; active: boolean; last_used_step: string | null }[] =
      await this.db.query(
        `SELECT secret_encrypted, active, last_used_step FROM two_factor_secrets WHERE user_id = $1`,
        [userId],
      );
    const row = rows[0];
    return row
      ? {
          secretEncrypted: row.secret_encrypted,
          active: row.active,
          lastUsedStep: row.last_used_step === null ? null : Number(row.last_used_step),
        }
      : null;
  }

  /** Stores a new pending enrolment with its recovery codes, replacing a pending one; false when one is active. */
  startEnrolment(userId: string, secretEncrypted: string, codeHashes: string[]): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const stored: unknown[] = await tx.query(
        `INSERT INTO two_factor_secrets (user_id, secret_encrypted) VALUES ($1, $2)
         ON CONFLICT (user_id) DO UPDATE
            SET secret_encrypted = EXCLUDED.secret_encrypted, last_used_step = NULL, created_at = now()
          WHERE two_factor_secrets.active = false
         RETURNING user_id`,
        [userId, secretEncrypted],
      );
      if (stored.length === 0) {
        return false;
      }
      await tx.query(`DELETE FROM recovery_codes WHERE user_id = $1`, [userId]);
      await tx.query(`INSERT INTO recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])`, [
        userId,
        codeHashes,
      ]);
      return true;
    });
  }

  /** Makes a pending enrolment active with the step of the code that proved it; false when nothing changed. */
  activate(userId: string, step: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [rows]: Changed = await tx.query(
        `UPDATE two_factor_secrets SET active = true, activated_at = now(), last_used_step = $2
          WHERE user_id = $1 AND active = false RETURNING user_id`,
        [userId, step],
      );
      if (rows.length === 0) {
        return false;
      }
      await tx.query(`UPDATE users SET two_factor_enabled = true WHERE id = $1`, [userId]);
      return true;
    });
  }

  /** Records an accepted code's step; false when this or a later step was already used (a replay). */
  async useStep(userId: string, step: number): Promise<boolean> {
    const [rows]: Changed = await this.db.query(
      `UPDATE two_factor_secrets SET last_used_step = $2
        WHERE user_id = $1 AND active AND (last_used_step IS NULL OR last_used_step < $2) RETURNING user_id`,
      [userId, step],
    );
    return rows.length === 1;
  }

  /** Uses up one unused recovery code of an active enrolment; false when there is no such code. */
  async useRecoveryCode(userId: string, codeHash: string): Promise<boolean> {
    const [rows]: Changed = await this.db.query(
      `UPDATE recovery_codes c SET used_at = now()
        WHERE c.user_id = $1 AND c.code_hash = $2 AND c.used_at IS NULL
          AND EXISTS (SELECT 1 FROM two_factor_secrets s WHERE s.user_id = c.user_id AND s.active)
        RETURNING c.id`,
      [userId, codeHash],
    );
    return rows.length === 1;
  }

  async remainingRecoveryCodes(userId: string): Promise<number> {
    const rows: { n: number }[] = await this.db.query(
      `SELECT count(*)::int AS n FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
      [userId],
    );
    return rows[0].n;
  }

  /**
   * Deletes an active enrolment and its recovery codes, provided `step` is later than the last used one
   * (the code that authorises the disable is itself not a replay); false when nothing was deleted.
   */
  disable(userId: string, step: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [rows]: Changed = await tx.query(
        `DELETE FROM two_factor_secrets
          WHERE user_id = $1 AND active AND (last_used_step IS NULL OR last_used_step < $2) RETURNING user_id`,
        [userId, step],
      );
      if (rows.length === 0) {
        return false;
      }
      await tx.query(`DELETE FROM recovery_codes WHERE user_id = $1`, [userId]);
      await tx.query(`UPDATE users SET two_factor_enabled = false WHERE id = $1`, [userId]);
      return true;
    });
  }
}
