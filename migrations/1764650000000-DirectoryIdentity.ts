import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A directory user's account is tied to its directory entry by the entry's immutable id (OpenLDAP entryUUID,
 * Active Directory objectGUID; the DN where the directory has neither), not by the mail the entry carries: a
 * user who can edit their own entry's mail must not become another account's owner.
 */
export class DirectoryIdentity1764650000000 implements MigrationInterface {
  name = 'DirectoryIdentity1764650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN directory_id varchar(512)`);
    await q.query(
      `CREATE UNIQUE INDEX uq_users_directory_id ON users (directory_id) WHERE directory_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX uq_users_directory_id`);
    await q.query(`ALTER TABLE users DROP COLUMN directory_id`);
  }
}
