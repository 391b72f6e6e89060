import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { ResultEntity, RunEntity, TestCaseEntity } from '../../../src/results/entities.js';
import { ResultsWriter, testIdentity } from '../../../src/results/results.writer.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

describe(ResultsWriter.name, () => {
  let database: TestDatabase;
  let db: DataSource;
  const sut = new ResultsWriter();
  let projectId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 4)).initialize();
    const [{ id }] = await db.query(`INSERT INTO projects (key, name) VALUES ('WR', 'writer') RETURNING id`);
    projectId = String(id);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  const newRun = async () => db.getRepository(RunEntity).save({ projectId, name: 'r', startedAt: new Date(), attributes: {} });

  it('returns ids in input order and keeps counts', async () => {
    const run = await newRun();
    const items = Array.from({ length: 300 }, (_, i) => ({ name: `t${i}`, suite: 's', status: i % 3 ? ('PASSED' as const) : ('SKIPPED' as const) }));
    const outcome = await db.transaction((tx) => sut.write(tx, run, items));
    const rows = await db.getRepository(ResultEntity).findBy({ runId: run.id });
    const nameOf = new Map(rows.map((r) => [r.id, r.name]));
    expect(outcome.ids.map((id) => nameOf.get(id!))).toEqual(items.map((i) => i.name));
    expect(outcome.counts).toEqual({ total: 300, passed: 200, failed: 0, broken: 0, skipped: 100 });
  });

  it('skips UUIDs already stored, and repeats within one batch, without counting them', async () => {
    const run = await newRun();
    const u1 = randomUUID();
    const u2 = randomUUID();
    await db.transaction((tx) => sut.write(tx, run, [{ uuid: u1, name: 'a', status: 'PASSED' }]));
    const outcome = await db.transaction((tx) =>
      sut.write(tx, run, [
        { uuid: u1, name: 'a', status: 'PASSED' },
        { uuid: u2, name: 'b', status: 'FAILED' },
        { uuid: u2.toUpperCase(), name: 'b', status: 'FAILED' },
        { name: 'no uuid', status: 'BROKEN' },
      ]),
    );
    expect(outcome.ids[0]).toBeNull();
    expect(outcome.ids[1]).not.toBeNull();
    expect(outcome.ids[2]).toBeNull();
    expect(outcome.ids[3]).not.toBeNull();
    expect(outcome.counts).toEqual({ total: 3, passed: 1, failed: 1, broken: 1, skipped: 0 });
  });

  it('gives a test one identity across runs: suite + name, or the explicit testId', async () => {
    const first = await newRun();
    const second = await newRun();
    await db.transaction((tx) => sut.write(tx, first, [{ name: 'same', suite: 'S', status: 'PASSED' }, { testId: 'ID-9', name: 'old', status: 'PASSED' }]));
    await db.transaction((tx) => sut.write(tx, second, [{ name: 'same', suite: 'S', status: 'FAILED' }, { testId: 'ID-9', name: 'renamed', status: 'FAILED' }]));
    const cases = await db.getRepository(TestCaseEntity).findBy({ projectId });
    const same = cases.filter((c) => c.identity === testIdentity({ name: 'same', suite: 'S' }));
    expect(same).toHaveLength(1);
    expect(same[0]).toEqual(expect.objectContaining({ lastStatus: 'FAILED', lastRunId: second.id }));
    const byId = cases.filter((c) => c.externalId === 'ID-9');
    expect(byId).toHaveLength(1);
    expect(byId[0].name).toBe('renamed');
  });

  it('rolls back with the caller: nothing of a failed transaction stays', async () => {
    const run = await newRun();
    await expect(
      db.transaction(async (tx) => {
        await sut.write(tx, run, [{ name: 'gone', status: 'PASSED' }]);
        throw new Error('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    expect(await db.getRepository(ResultEntity).countBy({ runId: run.id })).toBe(0);
    expect((await db.getRepository(RunEntity).findOneByOrFail({ id: run.id })).countTotal).toBe(0);
  });
});
