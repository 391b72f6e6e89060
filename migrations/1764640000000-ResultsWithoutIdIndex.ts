import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * No primary-key index on results.id. Nothing looks a result up by its id: results are read by run (ix_results_run_status),
 * by test (ix_results_test_history) and by UUID (uq_results_project_uuid), and deleted through their run or test case.
 * The ids stay unique, as the identity sequence hands them out (ResultsWriter takes blocks of it), but a btree that
 * only enforced that cost every stored result an index insert at the right edge, contended by concurrent writers:
 * measured on this machine with PostgreSQL alone (two connections, 1000 rows a transaction, into a table that holds
 * a previous run), 5.1-5.7 µs of PostgreSQL CPU per row with it and 3.7-3.8 without (8.5-10.6 against 6.8-7.7 with
 * UUIDs), the largest single share of a V1 write after the UUID index.
 *
 * For operators: a table without a primary key has no default replica identity, so a logical-replication
 * publication that includes results needs `ALTER TABLE results REPLICA IDENTITY FULL` to replicate deletes.
 */
export class ResultsWithoutIdIndex1764640000000 implements MigrationInterface {
  name = 'ResultsWithoutIdIndex1764640000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE results DROP CONSTRAINT results_pkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE results ADD CONSTRAINT results_pkey PRIMARY KEY (id)`);
  }
}
