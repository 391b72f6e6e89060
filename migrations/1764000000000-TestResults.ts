import { MigrationInterface, QueryRunner } from 'typeorm';

export class TestResults1764000000000 implements MigrationInterface {
  name = 'TestResults1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE runs (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        uuid uuid,
        name varchar(500) NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'IN_PROGRESS',
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
        count_total integer NOT NULL DEFAULT 0,
        count_passed integer NOT NULL DEFAULT 0,
        count_failed integer NOT NULL DEFAULT 0,
        count_broken integer NOT NULL DEFAULT 0,
        count_skipped integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_runs_project_uuid UNIQUE (project_id, uuid),
        CONSTRAINT ck_runs_status CHECK (status IN ('IN_PROGRESS', 'FINISHED'))
      )`);
    await q.query(`CREATE INDEX ix_runs_project_started ON runs (project_id, started_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE test_cases (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        identity char(32) NOT NULL,
        external_id varchar(500),
        suite varchar(1000) NOT NULL DEFAULT '',
        name varchar(1000) NOT NULL,
        last_status varchar(16),
        last_run_id bigint,
        flaky boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_test_cases_identity UNIQUE (project_id, identity)
      )`);
    await q.query(`CREATE INDEX ix_test_cases_project_name ON test_cases (project_id, suite, name)`);

    await q.query(`
      CREATE TABLE results (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        project_id bigint NOT NULL,
        test_id bigint NOT NULL REFERENCES test_cases (id) ON DELETE CASCADE,
        uuid uuid,
        name varchar(1000) NOT NULL,
        suite varchar(1000) NOT NULL DEFAULT '',
        status varchar(16) NOT NULL,
        duration_ms bigint,
        message text,
        trace text,
        started_at timestamptz,
        attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
        retry integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_results_project_uuid UNIQUE (project_id, uuid),
        CONSTRAINT ck_results_status CHECK (status IN ('PASSED', 'FAILED', 'BROKEN', 'SKIPPED'))
      )`);
    await q.query(`CREATE INDEX ix_results_run_status ON results (run_id, status, id)`);
    await q.query(`CREATE INDEX ix_results_test_history ON results (test_id, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE results`);
    await q.query(`DROP TABLE test_cases`);
    await q.query(`DROP TABLE runs`);
  }
}
