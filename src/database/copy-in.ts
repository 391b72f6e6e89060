import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { EntityManager } from 'typeorm';

/**
 * COPY … FROM STDIN on the connection of the caller's transaction: the cheapest way PostgreSQL takes rows
 * (no parameter arrays to build and parse, no per-row statement overhead). `rows` are chunks of text-format
 * lines, each line ending in a newline (see copyField). Resolves with the number of rows stored.
 */
export async function copyIn(tx: EntityManager, statement: string, rows: string[]): Promise<number> {
  const client = (tx.queryRunner as unknown as { databaseConnection?: PoolClient } | undefined)?.databaseConnection;
  if (!client) {
    throw new Error('copyIn needs an EntityManager bound to a transaction');
  }
  const stream = client.query(copyFrom(statement));
  await pipeline(
    Readable.from(rows.filter((chunk) => chunk.length > 0).map((chunk) => Buffer.from(chunk))),
    stream,
  );
  return stream.rowCount;
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One field of COPY's text format: null as \N; backslash, tab, newline and carriage return escaped. */
export function copyField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) {
    return '\\N';
  }
  if (typeof value === 'number') {
    return String(value);
  }
  return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (c) => ESCAPES[c]) : value;
}
