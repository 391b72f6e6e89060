import { MigrationInterface, QueryRunner } from 'typeorm';

export class AccessControl1763900000000 implements MigrationInterface {
  name = 'AccessControl1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_tokens (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(100) NOT NULL,
        prefix varchar(16) NOT NULL,
        token_hash char(64) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        expires_at timestamptz,
        CONSTRAINT uq_api_tokens_hash UNIQUE (token_hash)
      )`);
    await q.query(`CREATE INDEX ix_api_tokens_user ON api_tokens (user_id, created_at)`);

    await q.query(`
      CREATE TABLE projects (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key varchar(32) NOT NULL,
        name varchar(200) NOT NULL,
        description varchar(2000),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_projects_key UNIQUE (key),
        CONSTRAINT ck_projects_key CHECK (key ~ '^[A-Z0-9_]{2,32}$')
      )`);

    await q.query(`
      CREATE TABLE project_members (
        project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        role varchar(16) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, user_id),
        CONSTRAINT ck_project_members_role CHECK (role IN ('VIEWER', 'REPORTER', 'MAINTAINER', 'OWNER'))
      )`);
    await q.query(`CREATE INDEX ix_project_members_user ON project_members (user_id)`);

    await q.query(`
      CREATE TABLE groups (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name varchar(200) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_groups_name UNIQUE (name)
      )`);
    await q.query(`
      CREATE TABLE group_bindings (
        group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
        project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        role varchar(16) NOT NULL,
        PRIMARY KEY (group_id, project_id),
        CONSTRAINT ck_group_bindings_role CHECK (role IN ('VIEWER', 'REPORTER', 'MAINTAINER', 'OWNER'))
      )`);
    await q.query(`CREATE INDEX ix_group_bindings_project ON group_bindings (project_id)`);
    await q.query(`
      CREATE TABLE group_members (
        group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        source varchar(16) NOT NULL DEFAULT 'MANUAL',
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (group_id, user_id, source),
        CONSTRAINT ck_group_members_source CHECK (source IN ('MANUAL', 'DIRECTORY'))
      )`);
    await q.query(`CREATE INDEX ix_group_members_user ON group_members (user_id)`);

    await q.query(`
      CREATE TABLE invitations (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind varchar(16) NOT NULL,
        project_id bigint REFERENCES projects (id) ON DELETE CASCADE,
        email varchar(320) NOT NULL,
        role varchar(16),
        token_hash char(64) NOT NULL,
        invited_by bigint REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        mailed_at timestamptz,
        CONSTRAINT uq_invitations_token UNIQUE (token_hash),
        CONSTRAINT ck_invitations_kind CHECK (kind IN ('PROJECT', 'WORKSPACE')),
        CONSTRAINT ck_invitations_project CHECK ((kind = 'PROJECT') = (project_id IS NOT NULL AND role IS NOT NULL)),
        CONSTRAINT ck_invitations_email_lower CHECK (email = lower(email))
      )`);
    await q.query(`CREATE INDEX ix_invitations_pending_mail ON invitations (created_at) WHERE mailed_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['invitations', 'group_members', 'group_bindings', 'groups', 'project_members', 'projects', 'api_tokens']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
