import { MigrationInterface, QueryRunner } from 'typeorm';

/** The embedded V2 ingest queue (used when no SVC_BROKER_AMQP_URL is set); see PostgresIngestQueue. */
export class IngestQueue1764100000000 implements MigrationInterface {
  name = 'IngestQueue1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ingest_queue (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        payload jsonb NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        available_at timestamptz NOT NULL DEFAULT now(),
        dead_at timestamptz,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Consumers scan live rows in id order; dead rows stay out of that index.
    await q.query(`CREATE INDEX ix_ingest_queue_live ON ingest_queue (id) WHERE dead_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ingest_queue`);
  }
}
