import { DataSource } from 'typeorm';
import { isLockTimeout } from '../../../src/common/db-errors.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { PendingRepository } from '../../../src/notifications/pending.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/**
 * The claim of owed events (src/notifications/pending.repository.ts) on PostgreSQL: a run's finish waits for its
 * owed events a bounded time (5 s), and only while it claims them.
 */
describe('owed events: the claim', () => {
  let database: TestDatabase;
  let db: DataSource;
  let repository: PendingRepository;
  let projectId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 4)).initialize();
    repository = new PendingRepository(db);
    [{ id: projectId }] = await db.query(
      `INSERT INTO projects (key, name) VALUES ('OWED', 'owed') RETURNING id`,
    );
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  const owe = (runId: string, key: string) =>
    db.transaction((tx) =>
      repository.owe(tx, {
        projectId: String(projectId),
        type: 'run.failed',
        key,
        runId,
        testId: null,
        data: null,
      }),
    );

  it('waits for a claimed row a bounded time, then lets what the announcement writes wait as any write does', async () => {
    await owe('41', 'run.failed:41');
    await db.transaction(async (tx) => {
      const claimed = await repository.claim(tx, { runId: '41' }, true);
      expect(claimed.map((e) => e.key)).toEqual(['run.failed:41']);
      expect(await tx.query('SHOW lock_timeout')).toEqual([{ lock_timeout: '0' }]);
    });
  });

  it('gives up on a row another transaction holds after 5 s when it waits, and passes over it when it does not', async () => {
    await owe('42', 'run.failed:42');
    const holder = db.createQueryRunner();
    await holder.connect();
    try {
      await holder.startTransaction();
      await holder.query('SELECT 1 FROM pending_notifications WHERE run_id = 42 FOR UPDATE');
      const passedOver = await db.transaction((tx) => repository.claim(tx, { runId: '42' }, false));
      expect(passedOver).toEqual([]);
      const started = Date.now();
      const waited = await db
        .transaction((tx) => repository.claim(tx, { runId: '42' }, true))
        .catch((error: unknown) => error);
      expect(isLockTimeout(waited)).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
  }, 15_000);
});
