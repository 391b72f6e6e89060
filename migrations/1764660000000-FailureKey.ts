import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * failure_key(message): what a failure's message says once the parts that differ between otherwise equal failures
 * are stripped, so that one broken dependency shows as one group of 300 failures rather than 300 rows (GET
 * /api/runs/{id}/failure-groups, and the results of one group). In this order: UUIDs and hexadecimal ids (a hex
 * word holding both digits and letters, or 0x…) become `<id>`; temporary paths (/tmp, /var/tmp, macOS's
 * /var/folders, Windows' …\Temp\…) become `<tmp>`; numbers become `<n>`; runs of white space become one space. Of
 * the message's first 2000 characters; the key keeps 300.
 *
 * A function of the database, not of the service, so that the grouping and the filter on a group are one
 * expression and cannot drift apart. IMMUTABLE: it depends on its argument alone.
 */
export class FailureKey1764660000000 implements MigrationInterface {
  name = 'FailureKey1764660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(String.raw`
      CREATE FUNCTION failure_key(message text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT coalesce(nullif(left(btrim(regexp_replace(
          regexp_replace(
            regexp_replace(
              regexp_replace(
                regexp_replace(left(coalesce(message, ''), 2000),
                  '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<id>', 'g'),
                '(/private)?(/tmp|/var/tmp|/var/folders)(/[^\s''":,;)\]]*)?|[A-Za-z]:\\[^\s''":;]*\\Temp(\\[^\s''":;]*)?',
                '<tmp>', 'g'),
              '\m(0x[0-9a-fA-F]+|[0-9a-fA-F]*[0-9][0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*|[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*[0-9][0-9a-fA-F]*)\M',
              '<id>', 'g'),
            '\d+(\.\d+)?', '<n>', 'g'),
          '\s+', ' ', 'g')), 300), ''), '(no message)') $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION failure_key(text)`);
  }
}
