import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The embedded queue's payload as json, stored uncompressed: the consumer reads it back whole, so jsonb's
 * parse on insert and re-serialisation on read, and pglz compressing ~150 kB per message, were pure cost.
 */
export class IngestQueuePayloadJson1764610000000 implements MigrationInterface {
  name = 'IngestQueuePayloadJson1764610000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_queue ALTER COLUMN payload TYPE json USING payload::json`);
    await q.query(`ALTER TABLE ingest_queue ALTER COLUMN payload SET STORAGE EXTERNAL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ingest_queue ALTER COLUMN payload SET STORAGE EXTENDED`);
    await q.query(`ALTER TABLE ingest_queue ALTER COLUMN payload TYPE jsonb USING payload::jsonb`);
  }
}
