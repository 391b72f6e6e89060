import { MigrationInterface, QueryRunner } from 'typeorm';

/** V2 results (and finishes) that arrive before their run wait here and join the run when it arrives. */
export class PendingIngest1764200000000 implements MigrationInterface {
  name = 'PendingIngest1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_ingest (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        run_uuid uuid NOT NULL,
        kind varchar(16) NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ck_pending_ingest_kind CHECK (kind IN ('results', 'finish'))
      )`);
    await q.query(`CREATE INDEX ix_pending_ingest_run ON pending_ingest (project_id, run_uuid, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pending_ingest`);
  }
}
