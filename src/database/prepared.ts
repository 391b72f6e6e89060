import type { EntityManager } from 'typeorm';
import { transactionConnection } from './transaction-connection.js';

/**
 * A statement of the write path run as a named prepared statement on the transaction's connection: PostgreSQL
 * parses it once a connection and, after its first runs, plans it once (a long statement sent with every batch
 * cost ~0.4 ms of parsing and planning each time). Its rows. On a manager without a connection of its own (no
 * transaction), an ordinary query. `name` must name this text alone, everywhere: the connection keeps it.
 */
export async function queryPrepared<T>(
  tx: Pick<EntityManager, 'query'>,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const client = transactionConnection(tx);
  if (!client) {
    const answer: T[] | [T[], number] = await tx.query(text, values);
    return isUpdateAnswer(answer) ? answer[0] : answer;
  }
  return (await client.query<T & object>({ name, text, values })).rows;
}

/** TypeORM answers UPDATE and DELETE … RETURNING with [rows, affected]. */
function isUpdateAnswer<T>(answer: T[] | [T[], number]): answer is [T[], number] {
  return answer.length === 2 && Array.isArray(answer[0]) && typeof answer[1] === 'number';
}
