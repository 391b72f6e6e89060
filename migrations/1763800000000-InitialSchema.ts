import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        email varchar(320) NOT NULL,
        full_name varchar(200) NOT NULL,
        password_hash varchar(255),
        admin boolean NOT NULL DEFAULT false,
        enabled boolean NOT NULL DEFAULT true,
        auth_source varchar(16) NOT NULL DEFAULT 'LOCAL',
        email_verified boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_users_email UNIQUE (email),
        CONSTRAINT ck_users_email_lower CHECK (email = lower(email)),
        CONSTRAINT ck_users_auth_source CHECK (auth_source IN ('LOCAL', 'LDAP'))
      )`);
    await q.query(`
      CREATE TABLE audit_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        type varchar(64) NOT NULL,
        actor_id bigint,
        actor_email varchar(320),
        ip varchar(64),
        target varchar(500),
        details jsonb NOT NULL DEFAULT '{}'::jsonb,
        aggregate_key varchar(600),
        CONSTRAINT uq_audit_events_aggregate_key UNIQUE (aggregate_key)
      )`);
    await q.query(`CREATE INDEX ix_audit_events_at ON audit_events (at)`);
    await q.query(`CREATE INDEX ix_audit_events_type_at ON audit_events (type, at)`);
    await q.query(`CREATE INDEX ix_audit_events_actor_at ON audit_events (actor_id, at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
    await q.query(`DROP TABLE users`);
  }
}
