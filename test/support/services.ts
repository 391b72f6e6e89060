/** Where the real backing services of the test machine are; overridable for other machines. */
export const TEST_PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export function pgUrlFor(database: string): string {
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The broker's STOMP plugin (npm test enables rabbitmq_stomp on the machine's RabbitMQ). */
export const TEST_STOMP_HOST = process.env.TEST_STOMP_HOST ?? '127.0.0.1';
export const TEST_STOMP_PORT = process.env.TEST_STOMP_PORT ?? '61613';
