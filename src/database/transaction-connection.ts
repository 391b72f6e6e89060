import type { PoolClient } from 'pg';
import type { EntityManager } from 'typeorm';

/** The connection of a transaction-bound EntityManager (its query runner holds it); undefined for any other. */
export function transactionConnection(tx: Pick<EntityManager, 'query'>): PoolClient | undefined {
  return (tx as { queryRunner?: { databaseConnection?: PoolClient } }).queryRunner?.databaseConnection;
}
