/**
 * The code of a database error, whichever wrapper carries it (TypeORM's driverError, or pg's own): the SQLSTATE,
 * or the socket's errno (ECONNREFUSED, …) when there was no answer.
 */
export function sqlStateOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

/** PostgreSQL's unique_violation. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23505';
}

/** PostgreSQL's deadlock_detected. */
export function isDeadlock(error: unknown): boolean {
  return sqlStateOf(error) === '40P01';
}

/** PostgreSQL's serialization_failure. */
export function isSerializationFailure(error: unknown): boolean {
  return sqlStateOf(error) === '40001';
}

/** PostgreSQL's lock_not_available: a wait for a lock ended by lock_timeout (or a NOWAIT that found it taken). */
export function isLockTimeout(error: unknown): boolean {
  return sqlStateOf(error) === '55P03';
}

/**
 * A transaction that lost to a concurrent one and was rolled back whole, its data not at fault: a deadlock, a
 * serialization failure, or a lock not granted within lock_timeout. Trying it again is what to do.
 */
export function isTransactionConflict(error: unknown): boolean {
  return isDeadlock(error) || isSerializationFailure(error) || isLockTimeout(error);
}

/** PostgreSQL's foreign_key_violation. */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23503';
}

/** PostgreSQL's class 22, data exception: a value too long or out of range, an invalid character or timestamp. */
export function isDataException(error: unknown): boolean {
  return sqlStateOf(error)?.startsWith('22') === true;
}

/** PostgreSQL's query_canceled: by the statement timeout, or by a cancel request (a read whose client went away). */
export const QUERY_CANCELED = '57014';
