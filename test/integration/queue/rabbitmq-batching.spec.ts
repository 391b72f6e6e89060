import { IngestMessage } from '../../../src/infra/queue/ingest-queue.js';
import { RabbitMqIngestQueue } from '../../../src/infra/queue/rabbitmq-ingest.queue.js';
import { deleteQueues, runMessage, sleep, TEST_AMQP_URL, uniqueName, uuidOf, waitFor } from './queue-fixtures.js';

const LIMIT = 30_000;

/**
 * When the RabbitMQ consumer starts a partial batch: at once when it has none in hand (a lone message is not
 * held back), after the batch window while one is being handled (messages arriving meanwhile go together).
 * The window here is a minute, so a message that waited for it would fail the test's 10-second wait.
 */
describe('RabbitMqIngestQueue batching', () => {
  const queue = uniqueName('test.ingest.batching');
  let sut: RabbitMqIngestQueue;
  let calls: string[][];
  let release: () => void;
  let hold: Promise<void>;

  beforeEach(async () => {
    calls = [];
    hold = Promise.resolve();
    sut = new RabbitMqIngestQueue({ url: TEST_AMQP_URL, queue, batchWindowMs: 60_000 });
    await sut.start();
    await sut.consume(
      async (batch: IngestMessage[]) => {
        calls.push(batch.map(uuidOf));
        await hold;
      },
      { batchSize: 10, maxAttempts: 3 },
    );
  }, LIMIT);
  afterEach(() => sut.close(), LIMIT);
  afterAll(() => deleteQueues([queue, `${queue}.dead`]), LIMIT);

  it(
    'handles a lone message at once when no batch is in hand',
    async () => {
      const message = runMessage();
      await sut.publish(message);
      await waitFor('the lone message', () => calls.length === 1);
      expect(calls).toEqual([[uuidOf(message)]]);
    },
    LIMIT,
  );

  it(
    'gathers the messages that arrive while a batch is in hand into the next batch',
    async () => {
      hold = new Promise((resolve) => (release = resolve));
      const first = runMessage();
      await sut.publish(first);
      await waitFor('the first batch', () => calls.length === 1);
      const later = Array.from({ length: 5 }, () => runMessage());
      for (const message of later) {
        await sut.publish(message);
      }
      await sleep(200); // confirmed is not yet delivered: let the broker hand them all to the consumer
      release();
      await waitFor('the second batch', () => calls.length === 2);
      expect(calls).toEqual([[uuidOf(first)], later.map(uuidOf)]);
    },
    LIMIT,
  );
});
