import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Durable outbound mail, the one-time tokens of registration and password reset, and the workspace
 * subscription with the billing notices already sent (each once, whichever replica sends it).
 */
export class MailAndAccounts1764400000000 implements MigrationInterface {
  name = 'MailAndAccounts1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mail_outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind varchar(40) NOT NULL,
        recipient varchar(320) NOT NULL,
        subject varchar(300) NOT NULL,
        body text,
        status varchar(10) NOT NULL DEFAULT 'PENDING',
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        locked_until timestamptz,
        last_error varchar(500),
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        CONSTRAINT ck_mail_outbox_status CHECK (status IN ('PENDING', 'SENT', 'FAILED'))
      )`);
    await q.query(`CREATE INDEX ix_mail_outbox_due ON mail_outbox (next_attempt_at, id) WHERE status = 'PENDING'`);

    await q.query(`
      CREATE TABLE account_tokens (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        purpose varchar(20) NOT NULL,
        token_hash char(64) NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_account_tokens_hash UNIQUE (token_hash),
        CONSTRAINT ck_account_tokens_purpose CHECK (purpose IN ('VERIFY_EMAIL', 'RESET_PASSWORD'))
      )`);
    await q.query(`CREATE INDEX ix_account_tokens_user ON account_tokens (user_id, purpose) WHERE used_at IS NULL`);

    await q.query(`
      CREATE TABLE workspace_subscription (
        id smallint PRIMARY KEY DEFAULT 1,
        plan varchar(40) NOT NULL DEFAULT 'TRIAL',
        seats integer NOT NULL DEFAULT 10,
        period_end timestamptz NOT NULL,
        status varchar(10) NOT NULL DEFAULT 'TRIAL',
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ck_workspace_subscription_single CHECK (id = 1),
        CONSTRAINT ck_workspace_subscription_seats CHECK (seats >= 0),
        CONSTRAINT ck_workspace_subscription_status CHECK (status IN ('TRIAL', 'ACTIVE', 'PAST_DUE', 'EXPIRED'))
      )`);
    await q.query(`INSERT INTO workspace_subscription (period_end) VALUES (now() + interval '30 days')`);

    await q.query(`
      CREATE TABLE billing_notices (
        kind varchar(40) NOT NULL,
        dedupe_key varchar(200) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (kind, dedupe_key)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing_notices`);
    await q.query(`DROP TABLE workspace_subscription`);
    await q.query(`DROP TABLE account_tokens`);
    await q.query(`DROP TABLE mail_outbox`);
  }
}
