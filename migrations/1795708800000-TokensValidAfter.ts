import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * users.tokens_valid_after: access JWTs issued at or before this time are refused (a password reset, a disabled
 * account). Refresh tokens were already revoked then, but an access JWT is checked by its signature alone and kept
 * working for the rest of its lifetime; the guard compares its millisecond issue time with this column of the
 * user row it reads anyway. NULL: no cut-off.
 */
export class TokensValidAfter1795708800000 implements MigrationInterface {
  name = 'TokensValidAfter1795708800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN tokens_valid_after timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users DROP COLUMN tokens_valid_after`);
  }
}
