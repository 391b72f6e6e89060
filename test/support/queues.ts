import { randomBytes } from 'node:crypto';
import { deleteQueues, TEST_AMQP_URL } from '../integration/queue/queue-fixtures.js';

export type QueueKind = 'postgres' | 'rabbitmq';

/**
 * The two V2 queue adapters as a deployment's settings, for `describe.each`: the embedded PostgreSQL table, and
 * RabbitMQ on a queue of its own (`<prefix>.<random>`), so that concurrent suites never share one.
 */
export function queueAdapters(prefix: string): [QueueKind, Record<string, string>][] {
  return [
    ['postgres', {}],
    ['rabbitmq', { SVC_BROKER_AMQP_URL: TEST_AMQP_URL, SVC_BROKER_QUEUE: `${prefix}.${randomBytes(4).toString('hex')}` }],
  ];
}

/** Deletes the broker queue of a deployment's settings and its dead-letter queue; nothing for the table queue. */
export async function dropBrokerQueues(env: Record<string, string>): Promise<void> {
  const queue = env.SVC_BROKER_QUEUE;
  if (queue) {
    await deleteQueues([queue, `${queue}.dead`]);
  }
}
