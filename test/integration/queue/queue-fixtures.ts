import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { connect } from 'amqplib';
import type { IngestMessage } from '../../../src/infra/queue/ingest-queue.js';

/** The test machine's RabbitMQ; overridable like the other backing services. */
export const TEST_AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A queue name of its own, so concurrent test runs never share a queue. */
export function uniqueName(prefix: string): string {
  return `${prefix}.${randomBytes(5).toString('hex')}`;
}

/** A distinct message whose uuid identifies it in the handler. */
export function runMessage(uuid: string = randomUUID()): IngestMessage {
  return { kind: 'run', projectId: '1', uuid, name: `run ${uuid}` };
}

export function uuidOf(message: IngestMessage): string {
  return message.kind === 'run' ? message.uuid : message.runUuid;
}

/** Polls until `condition` holds; fails with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for ${what}`);
    }
    await sleep(20);
  }
}

/** Ready-message counts of RabbitMQ queues (a side connection, not the adapter's). */
export async function queueDepths(queues: string[]): Promise<number[]> {
  const model = await connect(TEST_AMQP_URL);
  try {
    const channel = await model.createChannel();
    const depths: number[] = [];
    for (const queue of queues) {
      depths.push((await channel.checkQueue(queue)).messageCount);
    }
    return depths;
  } finally {
    await model.close();
  }
}

export async function deleteQueues(queues: string[]): Promise<void> {
  if (!queues.length) {
    return;
  }
  const model = await connect(TEST_AMQP_URL);
  try {
    const channel = await model.createChannel();
    for (const queue of queues) {
      await channel.deleteQueue(queue);
    }
  } finally {
    await model.close();
  }
}

const run = promisify(execFile);
const RABBITMQCTL = process.env.RABBITMQCTL ?? '/usr/sbin/rabbitmqctl';

/**
 * Closes, from the broker's side, only the connections whose client-provided name is `connectionName`
 * (`close_all_connections` would also cut other users of this shared broker). Returns how many it closed.
 */
export async function closeBrokerConnections(connectionName: string): Promise<number> {
  const { stdout } = await run(RABBITMQCTL, [
    'list_connections',
    'pid',
    'client_properties',
    '-q',
    '--no-table-headers',
  ]);
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${connectionName}"}`))
    .map((line) => line.split('\t')[0]);
  for (const pid of pids) {
    await run(RABBITMQCTL, ['close_connection', pid, 'test: simulated broker failure']);
  }
  return pids.length;
}

/** Messages delivered and not yet acknowledged on the broker connections whose client ports are `ports`. */
export async function unackedOnPorts(ports: number[]): Promise<number> {
  const rows = async (args: string[]) =>
    (await run(RABBITMQCTL, [...args, '-q', '--no-table-headers'])).stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'));
  const connections = new Set((await rows(['list_connections', 'pid', 'peer_port'])).filter(([, port]) => ports.includes(Number(port))).map(([pid]) => pid));
  return (await rows(['list_channels', 'connection', 'messages_unacknowledged']))
    .filter(([connection]) => connections.has(connection))
    .reduce((n, [, unacked]) => n + Number(unacked), 0);
}
