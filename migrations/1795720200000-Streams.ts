import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Streams (API.md, "Streams: which runs are comparable") and project settings (API.md, "Project settings"):
 * - projects.settings: what a project set of its settings (src/common/project-settings.ts lays it over the defaults).
 * - runs.stream, indexed with the project and start: what "the run before" is taken from.
 * - run_stream(name, attributes, keys): the default stream rule of src/common/streams.ts in SQL (keep the two
 *   alike), which gives existing runs their stream here and any run inserted without one its stream (a trigger:
 *   the service always sets it; this covers every other writer).
 */
export class Streams1795720200000 implements MigrationInterface {
  name = 'Streams1795720200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE projects ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb`);
    await q.query(`
      CREATE FUNCTION stream_base(name text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
      DECLARE
        base text := regexp_replace(name, '^[[:space:]]+|[[:space:]]+$', '', 'g');
        stripped text;
      BEGIN
        FOR i IN 1..3 LOOP
          stripped := regexp_replace(regexp_replace(base, '(^|[[:space:]#:_./-]+)(#?[0-9]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?=[0-9a-f]{7,64}$)[0-9a-f]*[0-9][0-9a-f]*|[0-9]{4}-[0-9]{2}-[0-9]{2}([t ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(z|[+-][0-9]{2}:?[0-9]{2})?)?)$', '', 'i'), '^[[:space:]]+|[[:space:]]+$', '', 'g');
          EXIT WHEN stripped = base;
          base := stripped;
        END LOOP;
        RETURN base;
      END $$`);
    await q.query(`
      CREATE FUNCTION run_stream(name text, attributes jsonb, keys text[]) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT left(array_to_string(
                 ARRAY[coalesce(nullif(stream_base(name), ''), '#')]
                 || ARRAY(SELECT nullif(regexp_replace(attributes ->> k, '^[[:space:]]+|[[:space:]]+$', '', 'g'), '')
                            FROM unnest(keys) WITH ORDINALITY AS u(k, n) ORDER BY n),
                 ' · '), 200)
      $$`);
    await q.query(`ALTER TABLE runs ADD COLUMN stream varchar(200)`);
    await q.query(`
      UPDATE runs r SET stream = run_stream(r.name, r.attributes, CASE
               WHEN p.settings #> '{streams,attributes}' IS NULL THEN ARRAY['branch', 'env']
               ELSE ARRAY(SELECT jsonb_array_elements_text(p.settings #> '{streams,attributes}')) END)
        FROM projects p WHERE p.id = r.project_id`);
    await q.query(`
      CREATE FUNCTION runs_default_stream() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.stream IS NULL THEN
          NEW.stream := run_stream(NEW.name, NEW.attributes, coalesce(
            (SELECT ARRAY(SELECT jsonb_array_elements_text(settings #> '{streams,attributes}')) FROM projects
              WHERE id = NEW.project_id AND settings #> '{streams,attributes}' IS NOT NULL),
            ARRAY['branch', 'env']));
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(
      `CREATE TRIGGER tr_runs_default_stream BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION runs_default_stream()`,
    );
    await q.query(`ALTER TABLE runs ALTER COLUMN stream SET NOT NULL`);
    await q.query(
      `CREATE INDEX ix_runs_project_stream_started ON runs (project_id, stream, started_at DESC, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER tr_runs_default_stream ON runs`);
    await q.query(`DROP FUNCTION runs_default_stream()`);
    await q.query(`ALTER TABLE runs DROP COLUMN stream`);
    await q.query(`DROP FUNCTION run_stream(text, jsonb, text[])`);
    await q.query(`DROP FUNCTION stream_base(text)`);
    await q.query(`ALTER TABLE projects DROP COLUMN settings`);
  }
}
