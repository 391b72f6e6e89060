import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two-factor authentication: one TOTP secret per user (encrypted; pending until the first code activates it,
 * with the time step of the last accepted code against replay) and its ten recovery codes (keyed hashes).
 * `users.two_factor_enabled` mirrors an active secret for the hot read paths (/me, login).
 */
export class TwoFactor1764500000000 implements MigrationInterface {
  name = 'TwoFactor1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN two_factor_enabled boolean NOT NULL DEFAULT false`);
    await q.query(`
      CREATE TABLE two_factor_secrets (
        user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        secret_encrypted varchar(200) NOT NULL,
        active boolean NOT NULL DEFAULT false,
        last_used_step bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        activated_at timestamptz
      )`);
    await q.query(`
      CREATE TABLE recovery_codes (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        code_hash char(64) NOT NULL,
        used_at timestamptz,
        CONSTRAINT uq_recovery_codes_user_hash UNIQUE (user_id, code_hash)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recovery_codes`);
    await q.query(`DROP TABLE two_factor_secrets`);
    await q.query(`ALTER TABLE users DROP COLUMN two_factor_enabled`);
  }
}
