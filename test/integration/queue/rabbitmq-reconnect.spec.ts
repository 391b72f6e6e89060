import { AppError, ErrorCode } from '../../../src/common/app-error.js';
import { IngestMessage } from '../../../src/infra/queue/ingest-queue.js';
import { RabbitMqIngestQueue } from '../../../src/infra/queue/rabbitmq-ingest.queue.js';
import {
  closeBrokerConnections,
  deleteQueues,
  queueDepths,
  runMessage,
  sleep,
  TEST_AMQP_URL,
  uniqueName,
  uuidOf,
  waitFor,
} from './queue-fixtures.js';

const LIMIT = 60_000;

/**
 * Real broker disruption: the broker drops this service's connections (only ours; the broker itself keeps
 * running for other users of this machine) while messages are published and consumed.
 */
describe('RabbitMqIngestQueue under connection loss', () => {
  const queue = uniqueName('test.ingest.reconnect');
  const connectionName = uniqueName('tms-test-reconnect');
  let sut: RabbitMqIngestQueue | undefined;

  afterEach(() => sut?.close(), LIMIT);
  afterAll(() => deleteQueues([queue, `${queue}.dead`]), LIMIT);

  it(
    'answers UNAVAILABLE during the outage, reconnects by itself and loses no confirmed message',
    async () => {
      sut = new RabbitMqIngestQueue({
        url: TEST_AMQP_URL,
        queue,
        connectionName,
        // A first retry after ~1 s keeps each outage long enough to be observed by the publishers.
        minReconnectDelayMs: 1_000,
        maxReconnectDelayMs: 2_000,
        batchWindowMs: 20,
      });
      const queueUnderTest = sut;
      await queueUnderTest.start();
      expect(await queueUnderTest.isReady()).toBe(true);

      // Handlers are idempotent by UUID, so a redelivery after a reconnect is allowed; it is only counted.
      const handled = new Map<string, number>();
      await queueUnderTest.consume(
        async (batch: IngestMessage[]) => {
          await sleep(15); // a transaction's worth of time, so outages also hit batches in hand
          batch.forEach((m) => handled.set(uuidOf(m), (handled.get(uuidOf(m)) ?? 0) + 1));
        },
        { batchSize: 10, maxAttempts: 5 },
      );

      const confirmed = new Set<string>();
      const rejected: unknown[] = [];
      let slowestMs = 0;
      let publishing = true;
      const publisher = async (): Promise<void> => {
        while (publishing) {
          const message = runMessage();
          const started = Date.now();
          try {
            await queueUnderTest.publish(message);
            confirmed.add(uuidOf(message)); // what a client got a 202 for
          } catch (error) {
            rejected.push(error); // what a client got a 503 for (it retries)
          }
          slowestMs = Math.max(slowestMs, Date.now() - started);
          await sleep(3);
        }
      };
      const publishers = [publisher(), publisher(), publisher()];

      for (let outage = 1; outage <= 2; outage++) {
        const before = confirmed.size;
        await waitFor('publishes to be confirmed', () => confirmed.size >= before + 60);
        const rejectedBefore = rejected.length;
        expect(await closeBrokerConnections(connectionName)).toBe(1);
        await waitFor('the outage to be noticed', async () => !(await queueUnderTest.isReady()), 5_000);
        await waitFor('publishes to be refused', () => rejected.length > rejectedBefore, 5_000);
        await waitFor('the reconnection', () => queueUnderTest.isReady(), 15_000);
      }
      const afterOutages = confirmed.size;
      await waitFor('publishes to be confirmed again', () => confirmed.size >= afterOutages + 60);
      publishing = false;
      await Promise.all(publishers);

      expect(rejected.length).toBeGreaterThan(0);
      for (const error of rejected) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe(ErrorCode.UNAVAILABLE);
      }
      expect(slowestMs).toBeLessThan(3_000); // refused at once, never left hanging

      // Every message that got a "202" is consumed, at least once.
      await waitFor(
        'every confirmed message to be handled',
        () => [...confirmed].every((uuid) => handled.has(uuid)),
        20_000,
      );
      // Nothing is stranded: refused-but-delivered messages are consumed too, and every delivery was acked.
      await waitFor('the queue to drain', async () => (await queueDepths([queue]))[0] === 0, 10_000);
      expect(queueUnderTest.deadLettered()).toBe(0);
      const duplicates = [...handled.values()].filter((n) => n > 1).length;
      // Allowed (and expected to be rare): a batch handled but not yet acked when its channel died is redelivered.
      expect(duplicates).toBeLessThanOrEqual(handled.size);
    },
    LIMIT,
  );

  it(
    'refuses publishes at once while the broker cannot be reached, and closes cleanly while retrying',
    async () => {
      sut = new RabbitMqIngestQueue({
        url: 'amqp://guest:guest@127.0.0.1:1', // nothing listens on port 1
        queue,
        connectionName,
        minReconnectDelayMs: 100,
        maxReconnectDelayMs: 200,
      });
      await sut.start(); // does not throw: the service boots and keeps trying
      expect(await sut.isReady()).toBe(false);
      const started = Date.now();
      await expect(sut.publish(runMessage())).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
      expect(Date.now() - started).toBeLessThan(100);
      await sut.consume(() => Promise.resolve(), { batchSize: 10, maxAttempts: 3 }); // waits for a connection
      await sleep(500); // several reconnect attempts, none of which may crash the process
      expect(await sut.isReady()).toBe(false);
    },
    LIMIT,
  );
});
