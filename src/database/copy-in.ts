import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { EntityManager } from 'typeorm';
import { transactionConnection } from './transaction-connection.js';

/**
 * COPY … FROM STDIN on the connection of the caller's transaction: the cheapest way PostgreSQL takes rows
 * (no parameter arrays to build and parse, no per-row statement overhead). `rows` are text-format lines, each
 * ending in a newline (see copyField): as a CopyText, or as chunks of lines. Resolves with the number of rows
 * stored, once PostgreSQL has taken them all.
 */
export async function copyIn(tx: EntityManager, statement: string, rows: CopyText | string[]): Promise<number> {
  const client = transactionConnection(tx);
  if (!client) {
    throw new Error('copyIn needs an EntityManager bound to a transaction');
  }
  const stream = client.query(copyFrom(statement));
  const chunks = rows instanceof CopyText ? [rows.bytes()] : rows.map((chunk) => Buffer.from(chunk));
  await pipeline(Readable.from(chunks.filter((chunk) => chunk.length > 0)), stream);
  return stream.rowCount;
}

/** Buffers of finished CopyTexts, for the next ones: a batch's text reuses memory instead of making garbage. */
const spareBuffers: Buffer[] = [];
const SPARE_BUFFERS = 4;
const SPARE_BUFFER_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The lines of a COPY, encoded as they are added into one growing buffer (taken from the spares of earlier
 * batches): a batch of results with traces and output is megabytes of text, which as a string would be
 * flattened into the heap's large-object space and copied once more into a Buffer, two copies that lived until
 * the next full collection. `release()` it once the COPY has finished (PostgreSQL has then read every byte).
 */
export class CopyText {
  private buffer: Buffer;
  private length = 0;

  constructor(sizeHint = 256 * 1024) {
    const spare = spareBuffers.pop();
    this.buffer = spare && spare.length >= sizeHint ? spare : Buffer.allocUnsafeSlow(Math.max(sizeHint, spare?.length ?? 0));
  }

  /** Appends `text` (one or more whole lines, see copyField). */
  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit (a surrogate pair: 4 for 2).
    if (this.length + text.length * 3 > this.buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.length + text.length * 3));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += this.buffer.write(text, this.length);
  }

  /** The bytes added so far (a view, valid until release). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  /**
   * Gives the buffer back for the next CopyText, once its COPY has succeeded; this one must not be used any
   * more. (After a failed COPY, leave it to the collector: the socket may not have sent all of it.)
   */
  release(): void {
    if (spareBuffers.length < SPARE_BUFFERS && this.buffer.length <= SPARE_BUFFER_MAX_BYTES) {
      spareBuffers.push(this.buffer);
    }
    this.buffer = Buffer.alloc(0);
    this.length = 0;
  }
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
