/**
 * A bigint[] query parameter in its text form (`{1,2,3}`), for ids as PostgreSQL answered them (digits only).
 * node-postgres writes a JS array element by element, quoting each: ~2 ms of the event loop for 5,000 ids, where
 * this takes ~0.1 ms (the purge's batches pass 5,000 test ids, and share the event loop with ingest).
 */
export function idArray(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}
