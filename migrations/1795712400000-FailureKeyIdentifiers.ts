import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * failure_key(message) keeps the digits of identifiers. The first version replaced every run of digits, so a group
 * read `org.opentest<n>j.AssertionFailedError` or `getLine<n>()`: a number is now only a run of digits that does not
 * continue a word (`expected 42 but was 41` → `expected <n> but was <n>`, while `opentest4j`, `getLine2()`, `utf8`,
 * `v2`, `x86_64` and `sha256` stay). A number written after a value (`5000ms`) is still a number.
 *
 * In this order: UUIDs become `<id>`; temporary paths `<tmp>` (as before); ISO dates and times `<time>` (their `T17`
 * would otherwise read as a word); hexadecimal ids `<id>`: `0x…`, a hex word that starts with a digit and holds a
 * letter (`7852e922`), or one of six or more characters that starts with a letter and holds a digit (`a3f9c21`), so
 * that short words such as `e2e` and `b64` stay; then numbers (dotted ones whole) `<n>`; runs of white space one
 * space. Of the message's first 2000 characters; the key keeps 300.
 *
 * IMMUTABLE still (it depends on its argument alone), so an index on it stays usable; none of the migrations builds
 * one, but any index that uses the function (an operator's own) holds keys of the old definition and is rebuilt here.
 */
export const FAILURE_KEY = String.raw`
  CREATE OR REPLACE FUNCTION failure_key(message text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(nullif(left(btrim(regexp_replace(
      regexp_replace(
        regexp_replace(
          regexp_replace(
            regexp_replace(
              regexp_replace(left(coalesce(message, ''), 2000),
                '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<id>', 'g'),
              '(/private)?(/tmp|/var/tmp|/var/folders)(/[^\s''":,;)\]]*)?|[A-Za-z]:\\[^\s''":;]*\\Temp(\\[^\s''":;]*)?',
              '<tmp>', 'g'),
            '\m\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d([.,]\d+)?)?(Z|[+-]\d\d(:?\d\d)?)?)?', '<time>', 'g'),
          '\m(0x[0-9a-fA-F]+|\d[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*|(?=[0-9a-fA-F]{6})[a-fA-F][0-9a-fA-F]*\d[0-9a-fA-F]*)\M',
          '<id>', 'g'),
        '(?<!\w)\d+(\.\d+)*', '<n>', 'g'),
      '\s+', ' ', 'g')), 300), ''), '(no message)') $$`;

/** The definition of FailureKey1764660000000, for down(). */
const FIRST_FAILURE_KEY = String.raw`
  CREATE OR REPLACE FUNCTION failure_key(message text) RETURNS text
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
      '\s+', ' ', 'g')), 300), ''), '(no message)') $$`;

export class FailureKeyIdentifiers1795712400000 implements MigrationInterface {
  name = 'FailureKeyIdentifiers1795712400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(FAILURE_KEY);
    await reindexUsers(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(FIRST_FAILURE_KEY);
    await reindexUsers(q);
  }
}

/** Rebuilds every index whose expression or predicate calls failure_key: its stored keys are of the old definition. */
async function reindexUsers(q: QueryRunner): Promise<void> {
  const indexes: { name: string }[] = await q.query(
    `SELECT DISTINCT format('%I.%I', n.nspname, c.relname) AS name
       FROM pg_depend d
       JOIN pg_class c ON c.oid = d.objid AND c.relkind = 'i'
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_proc'::regclass
        AND d.refobjid = 'failure_key(text)'::regprocedure`,
  );
  for (const { name } of indexes) {
    await q.query(`REINDEX INDEX ${name}`);
  }
}
