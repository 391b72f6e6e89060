import { DataSource } from 'typeorm';
import { TestCasesWithoutProjectForeignKey1795880000000 } from '../../../migrations/1795880000000-TestCasesWithoutProjectForeignKey.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { RetentionRepository } from '../../../src/retention/retention.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/**
 * test_cases has no foreign key to projects (TestCasesWithoutProjectForeignKey1795880000000): the purge's last step,
 * the project's row, also deletes the test cases left of it, with their health and results, as the cascade did.
 */
describe("the purge of a deleted project's row", () => {
  let database: TestDatabase;
  let db: DataSource;
  let repo: RetentionRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 3)).initialize();
    repo = new RetentionRepository(db);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  /** A project with `tests` test cases, each with its health and a result in a run. */
  async function projectWithTests(key: string, tests: number): Promise<string> {
    const [{ id }] = await db.query(`INSERT INTO projects (key, name) VALUES ($1, $1) RETURNING id`, [key]);
    const [run] = await db.query(
      `INSERT INTO runs (project_id, name, status) VALUES ($1, 'nightly', 'FINISHED') RETURNING id`,
      [id],
    );
    const cases: { id: string }[] = await db.query(
      `INSERT INTO test_cases (project_id, identity, name)
       SELECT $1::bigint, md5($1::text || i)::uuid, 'case ' || i FROM generate_series(1, $2::int) i RETURNING id`,
      [id, tests],
    );
    const ids = cases.map((c) => c.id);
    await db.query(`INSERT INTO test_health (test_id, project_id) SELECT unnest($1::bigint[]), $2`, [
      ids,
      id,
    ]);
    await db.query(
      `INSERT INTO results (run_id, project_id, test_id, name, status) SELECT $1, $2, t, 'case', 'PASSED'
         FROM unnest($3::bigint[]) t`,
      [run.id, id, ids],
    );
    return String(id);
  }

  const left = async (projectId: string) =>
    (
      await db.query(
        `SELECT (SELECT count(*)::int FROM projects WHERE id = $1) AS projects,
                (SELECT count(*)::int FROM test_cases WHERE project_id = $1) AS tests,
                (SELECT count(*)::int FROM test_health WHERE project_id = $1) AS health,
                (SELECT count(*)::int FROM results WHERE project_id = $1) AS results`,
        [projectId],
      )
    )[0];

  it('has no foreign key from test_cases to projects', async () => {
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = 'test_cases'::regclass AND contype = 'f'`,
    );
    expect(n).toBe(0);
  });

  it('gets the foreign key back from the migration down, without the test cases of projects that are gone', async () => {
    const kept = await projectWithTests('DOWN', 2);
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO test_cases (project_id, identity, name) VALUES (999999, gen_random_uuid(), 'orphan')`,
      );
      const migration = new TestCasesWithoutProjectForeignKey1795880000000();
      await migration.down(runner);
      const keys = async () =>
        (
          await runner.query(
            `SELECT conname FROM pg_constraint WHERE conrelid = 'test_cases'::regclass AND contype = 'f'`,
          )
        ).map((r: { conname: string }) => r.conname);
      expect(await keys()).toEqual(['test_cases_project_id_fkey']);
      const [{ n }] = await runner.query(
        `SELECT count(*)::int AS n FROM test_cases WHERE project_id IN (999999, $1)`,
        [kept],
      );
      expect(n).toBe(2);
      await migration.up(runner);
      expect(await keys()).toEqual([]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('deletes the test cases left of the project with its row, and their health and results', async () => {
    const gone = await projectWithTests('GONE', 3);
    const kept = await projectWithTests('KEPT', 2);
    await db.query('UPDATE projects SET deleting_at = now() WHERE id = $1', [gone]);
    await repo.deleteProjectRow(gone);
    expect(await left(gone)).toEqual({ projects: 0, tests: 0, health: 0, results: 0 });
    expect(await left(kept)).toEqual({ projects: 1, tests: 2, health: 2, results: 2 });
  });

  it('finds the projects gone that have test cases left (a deletion by a replica on the code before), and only those', async () => {
    const live = await projectWithTests('ALIVE', 2);
    await db.query(
      `INSERT INTO test_cases (project_id, identity, name)
       SELECT p, gen_random_uuid(), 'left ' || i FROM unnest(ARRAY[900001, 900002]::bigint[]) p, generate_series(1, 3) i`,
    );
    expect((await repo.projectsGone()).sort()).toEqual(['900001', '900002']);
    expect(await repo.deleteTestCasesOfProject('900001', 2)).toBe(2);
    expect(await repo.deleteTestCasesOfProject('900001', 2)).toBe(1);
    expect(await repo.deleteTestCasesOfProject('900002', 10)).toBe(3);
    expect(await repo.projectsGone()).toEqual([]);
    expect(await left(live)).toEqual({ projects: 1, tests: 2, health: 2, results: 2 });
  });

  it('leaves a project that is not being deleted, and its test cases', async () => {
    const project = await projectWithTests('LIVE', 2);
    await repo.deleteProjectRow(project);
    expect(await left(project)).toEqual({ projects: 1, tests: 2, health: 2, results: 2 });
  });

  it("also deletes the test cases of a transaction that held one of the project's runs until the row's delete", async () => {
    const project = await projectWithTests('LATE', 1);
    await db.query('UPDATE projects SET deleting_at = now() WHERE id = $1', [project]);
    // A writer (an import) whose run, created in its own transaction, keeps the project's row from being deleted.
    const writer = db.createQueryRunner();
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`INSERT INTO runs (project_id, name, status) VALUES ($1, 'import', 'IN_PROGRESS')`, [
        project,
      ]);
      await writer.query(
        `INSERT INTO test_cases (project_id, identity, name) VALUES ($1::bigint, md5($1::text || 'late')::uuid, 'late')`,
        [project],
      );
      const deleted = repo.deleteProjectRow(project);
      // The row's delete waits for the writer's run (its foreign key) before the writer commits.
      const waiting = `SELECT 1 FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event_type = 'Lock'
                          AND query LIKE 'DELETE FROM projects%'`;
      while (!(await db.query(waiting)).length) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await writer.query('COMMIT');
      await deleted;
    } finally {
      await writer.release();
    }
    expect(await left(project)).toEqual({ projects: 0, tests: 0, health: 0, results: 0 });
  });
});
