import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import { DataSource } from 'typeorm';
import { AppError, ErrorCode } from '../../../src/common/app-error.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { BatchHandler, IngestMessage, IngestQueue } from '../../../src/infra/queue/ingest-queue.js';
import { PostgresIngestQueue } from '../../../src/infra/queue/postgres-ingest.queue.js';
import { RabbitMqIngestQueue } from '../../../src/infra/queue/rabbitmq-ingest.queue.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';
import {
  deleteQueues,
  queueDepths,
  runMessage,
  sleep,
  TEST_AMQP_URL,
  uniqueName,
  uuidOf,
  waitFor,
} from './queue-fixtures.js';

// Real brokers and databases: generous per-test limits (ESM Jest has no global `jest.setTimeout`).
const LIMIT = 30_000;

/** How a test reaches one adapter's backing store; `fresh()` gives each test an empty queue. */
interface Harness {
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  fresh(): Promise<void>;
  /** A new adapter instance (a "replica") on the current queue. */
  make(): Promise<IngestQueue>;
  /** Messages still waiting (not dead) and messages in the dead-letter store. */
  depth(): Promise<{ live: number; dead: number }>;
  /** Puts text on the queue behind the adapter's back, as a foreign producer (or a hand) might. */
  publishRaw(text: string): Promise<void>;
}

function rabbitHarness(): Harness {
  const prefix = uniqueName('test.ingest');
  const created: string[] = [];
  let queue = '';
  return {
    setUp: () => Promise.resolve(),
    tearDown: () => deleteQueues(created.flatMap((q) => [q, `${q}.dead`])),
    fresh() {
      queue = `${prefix}.${created.length}`;
      created.push(queue);
      return Promise.resolve();
    },
    async make() {
      const sut = new RabbitMqIngestQueue({
        url: TEST_AMQP_URL,
        queue,
        connectionName: `tms-test-${queue}`,
        batchWindowMs: 20,
      });
      await sut.start();
      return sut;
    },
    async depth() {
      const [live, dead] = await queueDepths([queue, `${queue}.dead`]);
      return { live, dead };
    },
    async publishRaw(text) {
      const model = await connect(TEST_AMQP_URL);
      try {
        const channel = await model.createConfirmChannel();
        channel.sendToQueue(queue, Buffer.from(text), { persistent: true });
        await channel.waitForConfirms();
      } finally {
        await model.close();
      }
    },
  };
}

function postgresHarness(): Harness {
  let db: TestDatabase;
  let ds: DataSource;
  return {
    async setUp() {
      db = await createTestDatabase();
      ds = await new DataSource(dataSourceOptions(db.url, 10)).initialize();
    },
    async tearDown() {
      await ds?.destroy();
      await db?.drop();
    },
    async fresh() {
      await ds.query('TRUNCATE ingest_queue');
    },
    make: () => Promise.resolve(new PostgresIngestQueue(ds, { idlePollMs: 50 })),
    async depth() {
      const [row] = await ds.query<{ live: number; dead: number }[]>(
        `SELECT count(*) FILTER (WHERE dead_at IS NULL)::int AS live, count(*) FILTER (WHERE dead_at IS NOT NULL)::int AS dead FROM ingest_queue`,
      );
      return row;
    },
    async publishRaw(text) {
      await ds.query('INSERT INTO ingest_queue (payload) VALUES ($1)', [text]);
    },
  };
}

/** Records what a handler saw and committed; `fail` decides which calls throw. */
function recorder(fail: (batch: IngestMessage[]) => Error | undefined = () => undefined, delayMs = 0) {
  const committed = new Map<string, number>();
  const calls: string[][] = [];
  const handler: BatchHandler = async (batch) => {
    calls.push(batch.map(uuidOf));
    if (delayMs) {
      await sleep(delayMs);
    }
    const error = fail(batch);
    if (error) {
      throw error;
    }
    for (const m of batch) {
      committed.set(uuidOf(m), (committed.get(uuidOf(m)) ?? 0) + 1);
    }
  };
  return { committed, calls, handler, total: () => [...committed.values()].reduce((a, b) => a + b, 0) };
}

describe.each([
  ['rabbitmq', rabbitHarness],
  ['postgres', postgresHarness],
])('IngestQueue contract: %s', (_name, makeHarness: () => Harness) => {
  const harness = makeHarness();
  let open: IngestQueue[] = [];

  const replica = async (): Promise<IngestQueue> => {
    const sut = await harness.make();
    open.push(sut);
    return sut;
  };
  const publishAll = async (sut: IngestQueue, messages: IngestMessage[]) => {
    for (const m of messages) {
      await sut.publish(m);
    }
  };

  beforeAll(() => harness.setUp(), LIMIT);
  afterAll(() => harness.tearDown(), LIMIT);
  beforeEach(() => harness.fresh());
  afterEach(async () => {
    await Promise.all(open.map((q) => q.close()));
    open = [];
  }, LIMIT);

  it(
    'is ready once started',
    async () => {
      expect(await (await replica()).isReady()).toBe(true);
    },
    LIMIT,
  );

  it(
    'delivers every message exactly once, in batches of at most batchSize, and acknowledges them',
    async () => {
      const sut = await replica();
      const messages = Array.from({ length: 45 }, () => runMessage());
      const seen = recorder();
      await sut.consume(seen.handler, { batchSize: 10, maxAttempts: 3 });
      await publishAll(sut, messages);
      await waitFor('every message', () => seen.total() >= messages.length);
      await sleep(300); // room for a stray second delivery
      expect([...seen.committed.keys()].sort()).toEqual(messages.map(uuidOf).sort());
      expect([...seen.committed.values()].every((n) => n === 1)).toBe(true);
      expect(Math.max(...seen.calls.map((c) => c.length))).toBeLessThanOrEqual(10);
      await sut.close();
      expect(await harness.depth()).toEqual({ live: 0, dead: 0 });
    },
    LIMIT,
  );

  it(
    'keeps messages published before any consumer starts',
    async () => {
      const publisher = await replica();
      const messages = Array.from({ length: 12 }, () => runMessage());
      await publishAll(publisher, messages);
      // The queue's own count (the tms_ingest_queue_depth metric) agrees with the harness's.
      expect(await publisher.depth()).toBe(12);
      await publisher.close();
      expect((await harness.depth()).live).toBe(12);

      const seen = recorder();
      await (await replica()).consume(seen.handler, { batchSize: 5, maxAttempts: 3 });
      await waitFor('the stored messages', () => seen.committed.size === 12);
      expect(seen.total()).toBe(12);
    },
    LIMIT,
  );

  it(
    'retries a failing batch message by message, so the good messages still get processed',
    async () => {
      const sut = await replica();
      const poison = randomUUID();
      const messages = [
        ...Array.from({ length: 4 }, () => runMessage()),
        runMessage(poison),
        ...Array.from({ length: 4 }, () => runMessage()),
      ];
      const seen = recorder((batch) =>
        batch.some((m) => uuidOf(m) === poison) ? new Error('poison') : undefined,
      );
      await publishAll(sut, messages);
      await sut.consume(seen.handler, { batchSize: 20, maxAttempts: 3 });
      await waitFor('the good messages', () => seen.committed.size === 8);
      expect(seen.committed.has(poison)).toBe(false);
      expect(seen.calls.some((c) => c.length > 1 && c.includes(poison))).toBe(true); // it was in a batch first
    },
    LIMIT,
  );

  it(
    'moves a message that keeps failing to the dead-letter queue after maxAttempts, and counts it',
    async () => {
      const sut = await replica();
      const poison = randomUUID();
      const seen = recorder((batch) =>
        batch.some((m) => uuidOf(m) === poison) ? new Error('always fails') : undefined,
      );
      await sut.consume(seen.handler, { batchSize: 10, maxAttempts: 3 });
      await publishAll(sut, [runMessage(poison), runMessage()]);
      await waitFor('the dead letter', () => sut.deadLettered() === 1);
      await sleep(300);
      // Tried alone exactly maxAttempts times, then left alone.
      expect(seen.calls.filter((c) => c.length === 1 && c[0] === poison)).toHaveLength(3);
      expect(sut.deadLettered()).toBe(1);
      expect(seen.committed.size).toBe(1);
      await sut.close();
      expect(await harness.depth()).toEqual({ live: 0, dead: 1 });
    },
    LIMIT,
  );

  it(
    'sends a message that is not a JSON message straight to the dead-letter queue, past the handler',
    async () => {
      const sut = await replica();
      const seen = recorder();
      await sut.consume(seen.handler, { batchSize: 10, maxAttempts: 3 });
      await harness.publishRaw('{"kind":"results","projectId":"1","runUuid":"x","batch":');
      await harness.publishRaw('[1, 2, 3]');
      await sut.publish(runMessage());
      await waitFor('the dead letters', () => sut.deadLettered() === 2);
      await waitFor('the good message', () => seen.committed.size === 1);
      expect(seen.calls.flat()).toHaveLength(1);
      await sut.close();
      expect(await harness.depth()).toEqual({ live: 0, dead: 2 });
    },
    LIMIT,
  );

  it(
    'hands a results batch queued as the JSON its client sent to the handler as a results message',
    async () => {
      const sut = await replica();
      const seen: IngestMessage[] = [];
      await sut.consume(
        (batch) => {
          seen.push(...batch);
          return Promise.resolve();
        },
        { batchSize: 10, maxAttempts: 3 },
      );
      const runUuid = randomUUID();
      const uuid = randomUUID().toUpperCase();
      await sut.publish({
        kind: 'results',
        projectId: '7',
        runUuid,
        body: Buffer.from(`{ "results" : [ {"uuid":"${uuid}","name":"a\\tb ✓","status":"PASSED","durationMs":5} ] }\n`),
      });
      await waitFor('the results message', () => seen.length === 1);
      expect(seen[0]).toEqual({
        kind: 'results',
        projectId: '7',
        runUuid,
        results: [{ uuid: uuid.toLowerCase(), name: 'a\tb ✓', status: 'PASSED', durationMs: 5 }],
      });
    },
    LIMIT,
  );

  it(
    'retries after a transient failure without counting an attempt',
    async () => {
      const sut = await replica();
      let outages = 3;
      const seen = recorder(() =>
        outages-- > 0 ? new AppError(ErrorCode.UNAVAILABLE, 'database away') : undefined,
      );
      await sut.consume(seen.handler, { batchSize: 10, maxAttempts: 2 });
      await sut.publish(runMessage());
      await waitFor('the message after the outage', () => seen.committed.size === 1);
      expect(sut.deadLettered()).toBe(0);
    },
    LIMIT,
  );

  it(
    'shares the work between two consumers without processing a message twice',
    async () => {
      const [a, b, publisher] = [await replica(), await replica(), await replica()];
      const seenA = recorder(undefined, 5);
      const seenB = recorder(undefined, 5);
      await a.consume(seenA.handler, { batchSize: 5, maxAttempts: 3 });
      await b.consume(seenB.handler, { batchSize: 5, maxAttempts: 3 });
      const messages = Array.from({ length: 150 }, () => runMessage());
      await Promise.all([
        publishAll(publisher, messages.slice(0, 75)),
        publishAll(publisher, messages.slice(75)),
      ]);
      await waitFor('every message', () => seenA.total() + seenB.total() >= messages.length);
      await sleep(300);
      expect(seenA.total() + seenB.total()).toBe(messages.length);
      expect(new Set([...seenA.committed.keys(), ...seenB.committed.keys()]).size).toBe(messages.length);
      expect(seenA.total()).toBeGreaterThan(0);
      expect(seenB.total()).toBeGreaterThan(0);
    },
    LIMIT,
  );

  it(
    'lets the batch in hand finish and be acknowledged on close',
    async () => {
      const first = await replica();
      const seen = recorder(undefined, 400);
      await first.consume(seen.handler, { batchSize: 10, maxAttempts: 3 });
      await first.publish(runMessage());
      await waitFor('the handler to start', () => seen.calls.length === 1);
      await first.close();
      expect(seen.committed.size).toBe(1);

      const again = recorder();
      await (await replica()).consume(again.handler, { batchSize: 10, maxAttempts: 3 });
      await sleep(400);
      expect(again.calls).toHaveLength(0);
    },
    LIMIT,
  );
});
